import type { ExtractionSchema } from '../core/extraction-schema.ts';
import type { EncodedContext, QuarantinedTurn, Scope, TemporalEntity, Turn, TurnInput } from '../core/types.ts';
import type { MaybePromise, SessionRecord } from '../ports/turn-buffer.ts';
import type { ExtractionReport } from '../pipeline/extraction-report.ts';
import type { BacklogView } from './extraction-backlog.ts';
import type { ContextFields } from '../memory/encoded-context.ts';
import type { AckReply, ContextReply, SearchReply } from '../core/wire.ts';

export type { AckReply, ContextReply, SearchReply };

/** A started session whose context is still serialised (see memory/encoded-context.ts). */
export interface EncodedStart {
  sessionId: string;
  context: EncodedContext;
  tookMs: number;
  /** The start made an ended call of the same owner live again (a reconnect after the end). */
  reopened: boolean;
  /** The session's start generation after this start: a deferred end of this call names it. */
  generation: number;
}

export interface StartOptions {
  holder?: string;
}

export interface SearchOptions {
  k?: number;
  deadlineMs?: number;
  /** World time (epoch ms) to search the memory as it stood then: facts valid then, nothing said after. */
  asOf?: number;
}

export type { ExtractionReport };

/**
 * The memory engine's whole surface: the three call-path operations plus the
 * background and admin ones. The gateway and the replay CLI use only this.
 */
/** A timeline record as read: `expired` is derived (an active ephemeral record past its `expiresAt`), never stored. */
export type TimelineEntity = Omit<TemporalEntity, 'status'> & { status: TemporalEntity['status'] | 'expired' };

export interface MemoryApi {
  /**
   * Session start: one read of the context cache (refilled from the hot document on a miss). The id of
   * an ended call of the same owner reopens it (`reopened: true`); one held by another agent or user is
   * refused with `conflict`.
   */
  startSession(scope: Scope, sessionId?: string): Promise<ContextReply>;
  /**
   * Session start with the context left as the cache stores it, for replies that splice its bytes.
   * `holder`: the gateway holding the call's socket (a WebSocket call), recorded with the start so a
   * sweep ends the call if that gateway goes away (docs/protocol.md, "Call lifecycle").
   */
  startSessionEncoded(scope: Scope, sessionId?: string, options?: StartOptions): Promise<EncodedStart>;
  /** The context a session start would return now, without opening a session (read-only; dashboards). */
  readContext(scope: Scope): Promise<ContextFields>;
  /** Turn append: validate, durable write, ack; may publish an extraction job. Sync when the buffer is. */
  appendTurn(scope: Scope, sessionId: string, input: TurnInput): MaybePromise<AckReply>;
  /** The session (its scope, whether it ended), for routes that carry only a session id; null when unknown. */
  session(tenantId: string, sessionId: string): Promise<SessionRecord | null>;
  /** memory_search: the cascade. */
  search(scope: Scope, query: string, options?: SearchOptions): Promise<SearchReply>;
  /**
   * End of call: pending turns become eligible for extraction (a job is published). With `ifGeneration`
   * (a dropped call's deferred end) only a live call not started again since; true when it ended the call.
   */
  endSession(scope: Scope, sessionId: string, options?: { ifGeneration?: number }): Promise<boolean>;
  /** The ack of a stored turnId (re-sent after its call ended), `duplicate: true`; null when never stored. */
  storedAck(scope: Scope, turnId: string): Promise<AckReply | null>;
  /** Run extraction for the user now and wait for its commit. */
  flush(scope: Scope): Promise<ExtractionReport>;
  /** Bi-temporal timeline; `history` false = active, unexpired only. An active ephemeral record past `expiresAt` reads `expired`. */
  timeline(scope: Scope, history: boolean): Promise<TimelineEntity[]>;
  /** Replace an agent's schema (validated; takes effect on the next extraction). */
  putSchema(tenantId: string, agentId: string, schema: unknown): Promise<ExtractionSchema>;
  /** Forget a user everywhere. */
  forget(scope: Scope): Promise<void>;
  /** Buffered (not yet compressed) turns, for tests and audits. */
  bufferedTurns(scope: Scope): Promise<Turn[]>;
  /** Stored turns extraction set aside, with why (oldest first). */
  quarantined(scope: Scope): Promise<QuarantinedTurn[]>;
  /** Turns acked here that no committed extraction has read yet: of a tenant, or of every tenant. */
  extractionBacklog(tenantId?: string): BacklogView;
}
