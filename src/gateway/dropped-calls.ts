import type { Logger } from '../core/logger.ts';
import type { Scope } from '../core/types.ts';
import type { CallStore } from './call-sweeper.ts';
import type { ObservedService } from './observed-api.ts';

/** Why a call ended, as `session.ended` says: `end` asked for, `dropped` (its socket closed without `end`). */
export type EndReason = 'end' | 'dropped';

/** A dropped call this gateway ended (for the `session.ended` event). */
export interface DroppedCall {
  scope: Scope;
  sessionId: string;
  lastSeq: number;
}

interface Pending extends DroppedCall {
  generation: number;
  timer: NodeJS.Timeout;
  attempt: number;
}

/** A failed deferred end (the store unreachable) is tried again this often, this many times. */
const RETRY_MS = 1_000;
const RETRIES = 5;

/**
 * Ends the calls whose WebSocket closed without `end`, after a grace period: a client that
 * reconnects within it reopens the call (on this gateway or another) and the end does nothing.
 * The end is conditional on the start generation the socket saw, decided by the store, so a
 * reopen anywhere in a cluster cancels it; a reopen here also clears the timer. An ended call
 * queues its extraction exactly as `end` does and emits `session.ended` with reason `dropped`.
 * The deferred end is also written to the shared store (`deferEnd`), so if this gateway dies before
 * the grace runs out, another gateway's sweep (or the next one to start) ends the call instead
 * (call-sweeper.ts); the timer here stays the punctual path.
 */
export class DroppedCalls {
  private readonly pending = new Map<string, Pending>();
  private readonly settled = new Set<Promise<void>>();

  constructor(
    private readonly service: Pick<ObservedService, 'endSession'>,
    private readonly logger: Logger,
    private readonly graceMs: number,
    /** Where the deferred end is made durable; absent: only this process knows it. */
    private readonly store: Pick<CallStore, 'deferEnd'> | null = null,
  ) {}

  /** The call of a socket that closed without `end`: end it after the grace unless started again. */
  schedule(scope: Scope, sessionId: string, generation: number, lastSeq: number): void {
    const key = keyOf(scope.tenantId, sessionId);
    const prev = this.pending.get(key);
    if (prev) clearTimeout(prev.timer);
    const p: Pending = { scope, sessionId, generation, lastSeq, attempt: 0, timer: undefined as unknown as NodeJS.Timeout };
    p.timer = setTimeout(() => this.fire(key, p), this.graceMs).unref();
    this.pending.set(key, p);
    this.store?.deferEnd(scope.tenantId, sessionId, generation, Date.now() + this.graceMs).catch((err: unknown) => {
      // The timer above still ends it; only a crash of this gateway within the grace would now forget it.
      this.logger.warn('could not record a dropped call in the store; this gateway still ends it after the grace', { err, sessionId, tenantId: scope.tenantId });
    });
  }

  /** The call was started again on this gateway: its pending end is moot (the store would refuse it anyway). */
  cancel(tenantId: string, sessionId: string): void {
    const key = keyOf(tenantId, sessionId);
    const p = this.pending.get(key);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(key);
  }

  /** Calls waiting out their grace. */
  get size(): number {
    return this.pending.size;
  }

  /**
   * Shutdown: end every call still in its grace now, so no dropped call is forgotten by an exit (waiting
   * out the grace would hold the exit for nothing). A client that already reconnected to another gateway
   * keeps its call (the end names the old generation); one that reconnects later reopens it.
   */
  async settle(): Promise<void> {
    for (const [key, p] of [...this.pending]) {
      clearTimeout(p.timer);
      this.fire(key, p);
    }
    await Promise.all([...this.settled]);
  }

  private fire(key: string, p: Pending): void {
    if (this.pending.get(key) !== p) return;
    this.pending.delete(key);
    const run = this.end(key, p);
    this.settled.add(run);
    void run.finally(() => this.settled.delete(run));
  }

  private async end(key: string, p: Pending): Promise<void> {
    try {
      // The observed service emits `session.ended` (reason dropped) if this end took effect.
      await this.service.endSession(p.scope, p.sessionId, { ifGeneration: p.generation, reason: 'dropped', lastSeq: p.lastSeq });
    } catch (err) {
      const fields = { err, sessionId: p.sessionId, tenantId: p.scope.tenantId, attempt: p.attempt + 1 };
      if (p.attempt >= RETRIES || this.pending.has(key)) return this.logger.error('could not end a dropped call; it stays open until reopened or ended', fields);
      this.logger.warn('could not end a dropped call; retrying', fields);
      p.attempt++;
      p.timer = setTimeout(() => this.fire(key, p), RETRY_MS).unref();
      this.pending.set(key, p);
    }
  }
}

function keyOf(tenantId: string, sessionId: string): string {
  return `${tenantId}\n${sessionId}`;
}
