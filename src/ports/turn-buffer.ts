import type { Scope, Turn, TurnInput } from '../core/types.ts';

/** A value, or a promise of it: lets a synchronous embedded adapter skip the microtask hop on the append path. */
export type MaybePromise<T> = T | Promise<T>;

/** Result of a durable append. */
export interface AppendOutcome {
  turn: Turn;
  /** True when the turnId was seen before; `turn` is then the original. */
  duplicate: boolean;
  /** Tokens of all turns still in the buffer for this agent+user (un-compressed). */
  pendingTokens: number;
}

/** A session start as the caller asks for it (the buffer numbers its starts). */
export interface NewSession {
  sessionId: string;
  scope: Scope;
  startedAt: number;
  endedAt: number | null;
}

/** Where a session lives: HTTP turn appends carry only the session id. */
export interface SessionRecord extends NewSession {
  /**
   * How many times the session was started (1 after the first open). A deferred end names the
   * generation it saw, so a reconnect that started the call again, on any gateway, outlives it.
   */
  generation: number;
}

/**
 * What `openSession` did: `opened` a new id; `existing`: started again by its owner while live (a
 * reconnect before the end); `reopened`: started again by its owner after it ended (live again);
 * `conflict`: the id belongs to another agent or user of the tenant and nothing changed.
 * `session` is the stored record after the open (the owner's, on a conflict).
 */
export interface OpenOutcome {
  status: 'opened' | 'existing' | 'reopened' | 'conflict';
  session: SessionRecord;
}

/**
 * The hot turn buffer (docs/design.md §2): an acked turn is durable here until its
 * extraction commits. Deliberately not here: extraction, locking, and anything
 * that reads more than one user's turns.
 */
export interface TurnBuffer {
  /**
   * Persist the turn durably, then return. Same `turnId` twice (even after the
   * turn was archived and removed) returns the original with `duplicate: true`.
   * `turn.tokens` and `turn.receivedAt` are set by the caller.
   */
  append(scope: Scope, sessionId: string, turn: Omit<Turn, 'seq' | 'turnId'> & { turnId: string }): MaybePromise<AppendOutcome>;
  /** All buffered turns of the user, in seq order. */
  list(scope: Scope): Promise<Turn[]>;
  /** The user's last `limit` buffered turns, in seq order: one bounded read for a session start. */
  latest(scope: Scope, limit: number): Promise<Turn[]>;
  /** Remove processed turns by id (never by overwriting the list: turns appended meanwhile stay). */
  remove(scope: Scope, turnIds: readonly string[]): Promise<void>;
  /** Tokens currently buffered for the user. */
  pendingTokens(scope: Scope): Promise<number>;
  /**
   * Record a session start, atomically: the first open of an id fixes its owner; each later open by
   * that owner bumps the generation and makes an ended session live again (startedAt stays); an open
   * by another agent or user is a `conflict` and changes nothing, however they race.
   */
  openSession(record: NewSession): Promise<OpenOutcome>;
  /** Look a session up by id within a tenant; null when unknown. */
  getSession(tenantId: string, sessionId: string): Promise<SessionRecord | null>;
  /**
   * Mark a session ended; true when a stored session was marked. With `ifGeneration`, only a live
   * session still at that generation is (a deferred end that a later start must cancel, atomically).
   */
  endSession(tenantId: string, sessionId: string, endedAt: number, ifGeneration?: number): Promise<boolean>;
  /** The seq a stored turnId was given (also after the turn left the buffer); null when unknown. */
  seqOf(scope: Scope, turnId: string): Promise<number | null>;
  /** Forget the user: turns, idempotency keys, sessions. */
  forget(scope: Scope): Promise<void>;
  close(): Promise<void>;
}

export type { TurnInput };
