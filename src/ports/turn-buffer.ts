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
  /**
   * The gateway that holds the call's socket (a WebSocket call), renewing its lease with
   * `renewLease`; absent for a call with no socket (HTTP). Each open sets it anew.
   */
  holder?: string;
}

/** Where a session lives: HTTP turn appends carry only the session id. */
export interface SessionRecord extends NewSession {
  /**
   * How many times the session was started (1 after the first open). A deferred end names the
   * generation it saw, so a reconnect that started the call again, on any gateway, outlives it.
   */
  generation: number;
  /**
   * A deferred end (`deferEnd`): the call's socket closed without `end`, and the call is to end at
   * this time (epoch ms) unless it is started again first. Absent otherwise; each open clears it.
   */
  dueAt?: number;
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
  /**
   * A call's socket closed without `end`: record that the call ends at `dueAt` unless started again,
   * durably, so any gateway's sweep ends it if the one that saw the close cannot. Only a live session
   * still at `generation` is marked (its holder is cleared: nobody holds a closed socket); true when marked.
   */
  deferEnd(tenantId: string, sessionId: string, generation: number, dueAt: number): Promise<boolean>;
  /** A gateway's heartbeat: the calls `holder` holds stand until `until` (epoch ms) at least. */
  renewLease(holder: string, until: number): Promise<void>;
  /**
   * The live sessions a sweep ends as dropped at `now`: those whose deferred end is due (`dueAt <= now`),
   * and those held by a gateway whose lease ran out `graceMs` or more before `now` (the gateway is gone,
   * its sockets with it). At most `limit`, in no particular order; each is ended with its generation,
   * so one started again since is kept. Also forgets the bookkeeping of ended calls and gone gateways.
   */
  dueSessions(now: number, graceMs: number, limit: number): Promise<SessionRecord[]>;
  /** The seq a stored turnId was given (also after the turn left the buffer); null when unknown. */
  seqOf(scope: Scope, turnId: string): Promise<number | null>;
  /** Forget the user: turns, idempotency keys, sessions. */
  forget(scope: Scope): Promise<void>;
  close(): Promise<void>;
}

export type { TurnInput };
