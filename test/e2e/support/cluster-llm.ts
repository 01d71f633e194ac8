/**
 * The scripted OpenAI-compatible LLM of the cluster suite: one instance per
 * memgate process, so the test knows which process asked what and when. It
 * answers like a small, honest model (a `location` fact for "I live in X", one
 * ACU per compressed turn) after `delayMs`, and holds the requests a test
 * marks with `holdWhen` until it releases them, so a process is provably stuck
 * between taking a user's lock and writing anything.
 */
import { startFakeOpenAI, type FakeChatBody, type FakeChatReply } from '../../support/fake-openai.ts';

/** One request as this LLM saw it. */
export interface ClusterLlmCall {
  kind: 'extract' | 'compress';
  turnIds: string[];
  /** Arrival and answer times (ms since epoch); `doneAt` stays null for a held request. */
  at: number;
  doneAt: number | null;
  held: boolean;
}

/** Handle on one running LLM. */
export interface ClusterLlm {
  /** Base URL for `MEMGATE_LLM_BASE_URL`. */
  readonly url: string;
  readonly calls: readonly ClusterLlmCall[];
  /** Requests for which this returns true are held until `release()` or `close()`. */
  holdWhen: ((call: ClusterLlmCall) => boolean) | null;
  /** Lets every held request go on to its normal answer. */
  release(): void;
  close(): Promise<void>;
}

interface PromptTurn {
  turnId: string;
  role: string;
  text: string;
}

const LIVES_IN = /\bI live in ([A-Z][\p{L}-]+)/u;

/** The turns of a prompt: src/adapters/openai/turn-lines.ts renders one JSON object per line. */
function promptTurns(body: FakeChatBody): PromptTurn[] {
  const prompt = body.messages.find((m) => m.role === 'user')?.content ?? '';
  const out: PromptTurn[] = [];
  for (const line of prompt.split('\n')) if (line.startsWith('{"turnId"')) out.push(JSON.parse(line) as PromptTurn);
  return out;
}

function answer(kind: ClusterLlmCall['kind'], turns: readonly PromptTurn[]): FakeChatReply {
  if (kind === 'compress') return { acus: turns.map((t) => ({ text: `In ${t.turnId} the ${t.role} said: ${t.text}`, turnRefs: [t.turnId], validAt: null })) };
  const facts = turns.flatMap((t) => {
    const city = t.role === 'user' ? LIVES_IN.exec(t.text)?.[1] : undefined;
    return city ? [{ field: 'location', qualifier: null, value: city, source: 'explicit', validFrom: null, correction: false, ended: false, evidence: [t.turnId] }] : [];
  });
  return { facts };
}

/** Starts one LLM on a free loopback port. */
export async function startClusterLlm(delayMs: number): Promise<ClusterLlm> {
  const fake = await startFakeOpenAI();
  const calls: ClusterLlmCall[] = [];
  const held: Array<() => void> = [];
  const llm: ClusterLlm = {
    url: fake.url,
    calls,
    holdWhen: null,
    release: () => {
      for (const go of held.splice(0)) go();
    },
    close: async () => {
      llm.release();
      await fake.close();
    },
  };
  fake.onChat(async (body): Promise<FakeChatReply> => {
    const turns = promptTurns(body);
    const kind = body.response_format?.json_schema?.name === 'atomic_context_units' ? 'compress' : 'extract';
    const call: ClusterLlmCall = { kind, turnIds: turns.map((t) => t.turnId), at: Date.now(), doneAt: null, held: false };
    calls.push(call);
    if (llm.holdWhen?.(call)) {
      call.held = true;
      await new Promise<void>((resolve) => held.push(resolve));
    }
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    call.doneAt = Date.now();
    return answer(kind, turns);
  });
  return llm;
}

/** Whether a call is about a user's turns (the suite's turn ids start with the user id). */
export function ofUser(call: ClusterLlmCall, userId: string): boolean {
  return call.turnIds.length > 0 && call.turnIds.every((id) => id.startsWith(`${userId}-`));
}

/** The calls about a user's turns. */
export function callsOf(llm: ClusterLlm, userId: string): ClusterLlmCall[] {
  return llm.calls.filter((c) => ofUser(c, userId));
}
