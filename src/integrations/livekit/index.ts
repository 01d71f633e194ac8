/**
 * `memgate/livekit`: memgate as the memory of a LiveKit Agents (Node, `@livekit/agents` 1.x)
 * voice agent. See the README section "Use with LiveKit Agents".
 *
 * - `MemgateMemory.start(opts)` opens the call (one `start`, bounded by `startTimeoutMs`) and
 *   `instructions(base)` puts the context block into the agent's instructions before its first reply;
 * - `attach(session)` appends every committed conversation item (user transcript, agent speech)
 *   with its item id as `turnId`, the speaker, the STT's confidence, and `interrupted: true` with
 *   the heard text after a barge-in; the session's close sends `end` so extraction runs;
 * - `tools()` is `{ memory_search }`, an `llm.tool` that searches within `searchDeadlineMs`
 *   (300 ms by default) and answers compact text;
 * - appends never block the agent: they queue (bounded, idempotent turnIds) while memgate is slow
 *   or down and are delivered when it is back; one log line says memory is degraded.
 */
import { AgentSessionEventTypes, llm, log } from '@livekit/agents';
import type { voice } from '@livekit/agents';
import { MEMORY_SEARCH_TOOL, memorySearchTool } from '../../core/search-tool.ts';
import type { ContextReply, SearchReply } from '../../client/index.ts';
import { ResilientCall, type IntegrationLogger, type ResilientCallOptions } from '../resilient-call.ts';

export type { IntegrationLogger } from '../resilient-call.ts';

/** Options of `MemgateMemory.start`. */
export interface MemgateLiveKitOptions extends ResilientCallOptions {
  /** Speaker names stored with the turns (e.g. the caller's name from the telephony leg, the agent's persona). */
  speakers?: { user?: string; agent?: string };
  /** memory_search latency budget: a voice turn cannot wait long (default 300 ms). */
  searchDeadlineMs?: number;
  /** memory_search results when the model does not ask for a number (default 5). */
  searchK?: number;
  /** How long the session's close waits for queued turns before sending `end` (default 5000 ms). */
  endTimeoutMs?: number;
  /** Default: LiveKit's own logger (`log()` of @livekit/agents), else the console. */
  logger?: IntegrationLogger;
}

/** The arguments the model passes to memory_search. */
interface SearchArgs {
  [key: string]: string | number | undefined;
  query: string;
  k?: number;
}

/** What the tool answers when memgate cannot: the model keeps talking without memory. */
const UNAVAILABLE = 'Memory is unavailable right now. Answer from this conversation, and do not claim to remember earlier calls.';
/** Longest text of one result handed to the model (a voice turn's prompt stays small). */
const MAX_RESULT_CHARS = 300;

/** LiveKit's pino logger when the agent initialised it (`cli.runApp` does), else the console. */
const livekitLogger: IntegrationLogger = {
  info: (msg, fields) => write('info', msg, fields),
  warn: (msg, fields) => write('warn', msg, fields),
};
function write(level: 'info' | 'warn', msg: string, fields: Record<string, unknown> = {}): void {
  let logger: ReturnType<typeof log> | null = null;
  try {
    logger = log();
  } catch {
    // logger not initialised (a script, a test): fall through to the console
  }
  if (logger) logger.child({ component: 'memgate' })[level](fields, msg);
  else if (level === 'warn') console.warn(msg, fields);
  else console.info(msg, fields);
}

/** Search results as a few short lines the model can read aloud-safely, highest first. */
export function formatResults(reply: SearchReply): string {
  if (reply.results.length === 0) return 'Nothing in memory about that.';
  const lines = reply.results.map((r) => {
    const text = r.text.length > MAX_RESULT_CHARS ? `${r.text.slice(0, MAX_RESULT_CHARS - 1)}…` : r.text;
    const outdated = r.outdated ? `; outdated, now: ${r.outdated.now ?? 'no longer true'}` : '';
    return `- ${text.replace(/\s+/g, ' ')} (${r.confidence} confidence${outdated})`;
  });
  return (reply.partial ? 'Partial memory results (search was cut short):\n' : 'From memory:\n') + lines.join('\n');
}

/**
 * One call's memory for a LiveKit `voice.AgentSession`. Memory never holds the agent up:
 * a memgate that is down at start gives no context (the agent starts anyway), later turns
 * queue until it is back, and memory_search answers "unavailable" within its deadline.
 */
export class MemgateMemory {
  /** The context memgate returned at start; null when it did not answer in time. */
  context: ContextReply | null = null;
  private attached: voice.AgentSession | null = null;
  private readonly speakerIds = new Map<string, string>();
  /** The diarized speaker of the final transcripts since the last user item (1.9 sends them without an itemId). */
  private pendingSpeaker: string | undefined;

  private constructor(
    private readonly opts: MemgateLiveKitOptions,
    /** The underlying call: queue length, degraded state, delivered count. */
    readonly call: ResilientCall,
  ) {}

  /** Connect and fetch the context (one `start`; at most `startTimeoutMs`, default 1000 ms). Never throws for memgate being down. */
  static async start(opts: MemgateLiveKitOptions): Promise<MemgateMemory> {
    const memory = new MemgateMemory(opts, new ResilientCall({ ...opts, logger: opts.logger ?? livekitLogger }));
    memory.context = await memory.call.start();
    return memory;
  }

  /** The session id memgate stores this call's turns under. */
  get sessionId(): string {
    return this.call.sessionId;
  }

  /** The agent's instructions with the context block appended (unchanged when there is no context). */
  instructions(base: string): string {
    const block = this.context?.contextBlock?.trim();
    return block ? `${base.trimEnd()}\n\n${block}` : base;
  }

  /** `{ memory_search }` for `new voice.Agent({ tools })`. */
  tools() {
    const def = memorySearchTool().function;
    const deadlineMs = this.opts.searchDeadlineMs ?? 300;
    return {
      [MEMORY_SEARCH_TOOL]: llm.tool({
        description: def.description,
        // A JSON Schema (the server's own definition); typed by what it validates to.
        parameters: def.parameters as unknown as { _output: SearchArgs },
        execute: async (args: SearchArgs): Promise<string> => {
          const reply = await this.call.search(String(args.query ?? ''), { k: args.k ?? this.opts.searchK ?? 5, deadlineMs });
          return reply ? formatResults(reply) : UNAVAILABLE;
        },
      }),
    };
  }

  /** Store the session's committed conversation items and end the call when the session closes. */
  attach(session: voice.AgentSession): this {
    if (this.attached) throw new Error('MemgateMemory is already attached to a session');
    this.attached = session;
    session.on(AgentSessionEventTypes.UserInputTranscribed, (ev) => {
      // Diarization: a final transcript names the speaker of the user item it becomes.
      if (!ev.isFinal || !ev.speakerId) return;
      if (ev.itemId) this.speakerIds.set(ev.itemId, ev.speakerId);
      else this.pendingSpeaker = ev.speakerId;
    });
    session.on(AgentSessionEventTypes.ConversationItemAdded, (ev) => this.onItem(ev.item));
    session.on(AgentSessionEventTypes.Close, () => void this.end());
    return this;
  }

  /** Deliver the queued turns and send `end` (extraction runs). Called on the session's close; idempotent. */
  end(): Promise<void> {
    return this.call.end(this.opts.endTimeoutMs ?? 5000);
  }

  private onItem(item: llm.ChatMessage | llm.AgentHandoffItem): void {
    if (item.type !== 'message') return;
    const role = item.role === 'user' ? 'user' : item.role === 'assistant' ? 'agent' : null;
    const text = item.textContent?.trim();
    if (!role || !text) return;
    let speaker = this.opts.speakers?.agent;
    if (role === 'user') {
      speaker = this.speakerIds.get(item.id) ?? this.pendingSpeaker ?? this.opts.speakers?.user;
      this.speakerIds.delete(item.id);
      this.pendingSpeaker = undefined;
    }
    this.call.append({
      role,
      text,
      turnId: item.id,
      ts: item.createdAt,
      ...(speaker ? { speaker } : {}),
      ...(role === 'user' && typeof item.transcriptConfidence === 'number' ? { asrConfidence: item.transcriptConfidence } : {}),
      ...(role === 'agent' && item.interrupted ? { interrupted: true } : {}),
    });
  }
}
