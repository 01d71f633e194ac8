import { initializeLogger, llm, voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import { memorySearchTool } from '../../src/core/search-tool.ts';
import { MemgateMemory } from '../../src/integrations/livekit/index.ts';
import { startFakeOpenAI, type FakeChatBody } from '../../test/support/fake-openai.ts';
import type { Figure } from '../lib/report-types.ts';
import { round3, summarizeMs } from '../lib/stats.ts';
import { figure } from '../lib/targets.ts';
import { latencyFigures } from './latency-figures.ts';

const quiet = { info: () => undefined, warn: () => undefined };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

/**
 * What memgate/livekit adds to a LiveKit agent's turn, on a real `voice.AgentSession` (no room:
 * text input) with the OpenAI plugin against the local fake OpenAI server, memgate in its own
 * process. Each figure has its baseline from the same run, interleaved run by run:
 * - session start → first LLM request arrives, with `MemgateMemory.start` + `attach` vs without;
 * - the tool round (the model's tool call answered → follow-up request arrives), memory_search
 *   vs a no-op tool of the same schema;
 * - an append on the agent's path: the synchronous enqueue of the ConversationItemAdded listener.
 */
export async function livekitOverhead(memgateUrl: string, runs: number, userId: string): Promise<{ figures: Figure[]; details: Record<string, unknown> }> {
  initializeLogger({ pretty: false, level: 'silent' });
  const fake = await startFakeOpenAI();
  const model = () => new openai.LLM({ model: 'gpt-4o-mini', baseURL: fake.url, apiKey: 'bench' });
  let firstRequestAt = 0;
  let toolCallAnsweredAt = 0;
  let followUpAt = 0;
  fake.onChat((body: FakeChatBody) => {
    const last = body.messages.at(-1);
    if (last?.role === 'tool') {
      followUpAt = performance.now();
      return 'Your budget is 80 lakhs.';
    }
    if (last?.content === 'budget?') {
      toolCallAnsweredAt = performance.now();
      return { toolCalls: [{ name: 'memory_search', arguments: { query: 'budget' } }] };
    }
    firstRequestAt ||= performance.now();
    return 'Hello!';
  });
  const noopTool = {
    memory_search: llm.tool({
      description: memorySearchTool().function.description,
      parameters: memorySearchTool().function.parameters as unknown as { _output: { query: string } },
      execute: async () => 'Nothing in memory about that.',
    }),
  };

  try {
    const startWith: number[] = [];
    const startWithout: number[] = [];
    const toolWith: number[] = [];
    const toolWithout: number[] = [];
    for (let i = 0; i < runs + 2; i++) {
      for (const withMemory of i % 2 === 0 ? [true, false] : [false, true]) {
        firstRequestAt = 0;
        const t0 = performance.now();
        const memory = withMemory ? await MemgateMemory.start({ url: memgateUrl, agentId: 'bench', userId, logger: quiet }) : null;
        const session = new voice.AgentSession({ llm: model() });
        memory?.attach(session);
        const agent = new voice.Agent({ instructions: memory ? memory.instructions('You are Maya.') : 'You are Maya.', tools: memory ? memory.tools() : noopTool });
        await session.start({ agent });
        await session.run({ userInput: 'hello' }).wait();
        const startMs = firstRequestAt - t0;
        await session.run({ userInput: 'budget?' }).wait();
        const toolMs = followUpAt - toolCallAnsweredAt;
        await session.close();
        await memory?.end();
        if (i < 2) continue; // warm-up: JIT, connections, the fake's first requests
        (withMemory ? startWith : startWithout).push(startMs);
        (withMemory ? toolWith : toolWithout).push(toolMs);
      }
    }

    // The append path: what the ConversationItemAdded listener does on the agent's loop (enqueue; the send is async).
    const memory = await MemgateMemory.start({ url: memgateUrl, agentId: 'bench', userId: `${userId}-appends`, logger: quiet });
    const enqueue: number[] = [];
    for (let i = 0; i < 400; i++) {
      const s = performance.now();
      memory.call.append({ role: i % 2 ? 'agent' : 'user', text: `bench turn ${i}: my budget is 80 lakhs`, turnId: `lk-${i}` });
      enqueue.push(performance.now() - s);
      if (i % 20 === 19) await new Promise((r) => setTimeout(r, 5));
    }
    await memory.end();

    const sum = (ms: number[]) => summarizeMs(ms, 0, 0);
    const overheadStart = round3(median(startWith) - median(startWithout));
    const overheadTool = round3(median(toolWith) - median(toolWithout));
    const drop = new Set(['throughput', 'errors']);
    const figures = [
      ...latencyFigures(`LiveKit session start → first LLM request, with memgate (${runs})`, sum(startWith), { label: 'without memgate', summary: sum(startWithout) }).filter(
        (f) => !drop.has(f.metric),
      ),
      figure({ bench: 'LiveKit session start: added by memgate', metric: 'p50 difference', value: overheadStart, unit: 'ms' }),
      ...latencyFigures(`LiveKit tool round, memory_search (${runs})`, sum(toolWith), { label: 'no-op tool, same schema', summary: sum(toolWithout) }).filter((f) => !drop.has(f.metric)),
      figure({ bench: 'LiveKit memory_search: added by memgate', metric: 'p50 difference', value: overheadTool, unit: 'ms' }),
      ...latencyFigures('LiveKit append on the agent path (enqueue, 400)', sum(enqueue), null).filter((f) => !drop.has(f.metric)),
    ];
    return { figures, details: { livekitRuns: runs, overheadStartP50Ms: overheadStart, overheadToolP50Ms: overheadTool, appendsDelivered: memory.call.delivered } };
  } finally {
    await fake.close();
  }
}
