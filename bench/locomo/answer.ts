/**
 * LoCoMo answer F1 with a real OpenAI-compatible chat endpoint (only when one is
 * configured: MEMGATE_BENCH_LLM_BASE_URL, _API_KEY, _MODEL). The model sees what
 * memgate would give a voice agent — the session-start context block plus the
 * memory_search results for the question — and answers in a short phrase,
 * which the ported official scorer grades.
 */
import OpenAI from 'openai';

/** Endpoint settings read from the environment, or null when answer F1 is off. */
export interface AnswerModel {
  baseURL: string;
  apiKey: string;
  model: string;
}

/** The configured answering model, or null. */
export function answerModelFromEnv(env: NodeJS.ProcessEnv = process.env): AnswerModel | null {
  const baseURL = env['MEMGATE_BENCH_LLM_BASE_URL'];
  if (!baseURL) return null;
  return { baseURL, apiKey: env['MEMGATE_BENCH_LLM_API_KEY'] ?? 'none', model: env['MEMGATE_BENCH_LLM_MODEL'] ?? 'gpt-4o-mini' };
}

/** Ask the model one LoCoMo question with memgate's memory as its only context. */
export async function answerQuestion(client: OpenAI, model: string, question: string, contextBlock: string, results: readonly { text: string; validAt: string }[]): Promise<string> {
  const memory = results.map((r, i) => `${i + 1}. [${r.validAt.slice(0, 10)}] ${r.text}`).join('\n');
  const reply = await client.chat.completions.create({
    model,
    temperature: 0,
    max_tokens: 64,
    messages: [
      {
        role: 'system',
        content:
          'You answer questions about two people from their long-term memory. Answer in a short phrase using exact words from the memory whenever possible. For questions about time, answer with a date.',
      },
      { role: 'user', content: `Context:\n${contextBlock}\n\nMemory search results:\n${memory}\n\nQuestion: ${question}\nShort answer:` },
    ],
  });
  return reply.choices[0]?.message.content?.trim() ?? '';
}

/** An OpenAI client for the model. */
export function answerClient(m: AnswerModel): OpenAI {
  return new OpenAI({ baseURL: m.baseURL, apiKey: m.apiKey, maxRetries: 2, timeout: 60_000 });
}
