/**
 * A scripted OpenAI-compatible LLM for the multi-process test, on top of
 * test/support/fake-openai.ts: every request is logged with the turn ids it
 * carries, answered after `delayMs` (one ACU per turn, no facts), and from a
 * chosen point on held forever, so the worker calling it is provably stuck
 * between taking its lock and writing anything.
 */
import { startFakeOpenAI, type FakeChatBody, type FakeChatReply } from '../../support/fake-openai.ts';

/** One request as the LLM saw it. */
export interface LlmCall {
  kind: 'extract' | 'compress';
  turnIds: string[];
  at: number;
  /** False while pending, and forever for a held request. */
  answered: boolean;
  held: boolean;
}

/** Options of {@link startWindowLlm}. */
export interface WindowLlmOptions {
  /** Time before each answer. */
  delayMs: number;
  /** Hold (never answer) every request that arrives after this many answers; default never. */
  holdAfterAnswers?: number;
}

/** Handle on a running scripted LLM. */
export interface WindowLlm {
  /** Base URL for `MEMGATE_LLM_BASE_URL`. */
  readonly url: string;
  readonly calls: readonly LlmCall[];
  answered(): number;
  held(): LlmCall[];
  close(): Promise<void>;
}

interface TurnLine {
  turnId: string;
  text: string;
}

/** The JSON turn lines of a prompt (src/adapters/openai/turn-lines.ts renders one object per line). */
function turnLines(body: FakeChatBody): TurnLine[] {
  const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
  return user
    .split('\n')
    .filter((l) => l.startsWith('{"turnId"'))
    .map((l) => JSON.parse(l) as TurnLine);
}

/** Starts the LLM on a free loopback port. */
export async function startWindowLlm(options: WindowLlmOptions): Promise<WindowLlm> {
  const fake = await startFakeOpenAI();
  const calls: LlmCall[] = [];
  const releases: Array<() => void> = [];
  let answered = 0;

  fake.onChat(async (body): Promise<FakeChatReply> => {
    const turns = turnLines(body);
    const kind = body.response_format?.json_schema?.name === 'atomic_context_units' ? 'compress' : 'extract';
    const call: LlmCall = { kind, turnIds: turns.map((t) => t.turnId), at: Date.now(), answered: false, held: false };
    calls.push(call);
    if (options.holdAfterAnswers !== undefined && answered >= options.holdAfterAnswers) {
      call.held = true;
      await new Promise<void>((resolve) => releases.push(resolve));
      return { mode: 'hang' };
    }
    await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    answered++;
    call.answered = true;
    if (kind === 'extract') return { facts: [] };
    // One ACU per turn, naming its turn: the test can then check each archived turn has exactly one.
    return { acus: turns.map((t) => ({ text: `The user said in ${t.turnId}: ${t.text}`, turnRefs: [t.turnId], validAt: null })) };
  });

  return {
    url: fake.url,
    calls,
    answered: () => answered,
    held: () => calls.filter((c) => c.held),
    async close() {
      for (const release of releases.splice(0)) release();
      await fake.close();
    },
  };
}
