import type { Logger } from '../core/logger.ts';
import type { TurnBuffer } from '../ports/turn-buffer.ts';
import type { ObservedService } from './observed-api.ts';

/** What the sweep needs of the shared store (the turn buffer, where sessions live). */
export type CallStore = Pick<TurnBuffer, 'deferEnd' | 'renewLease' | 'dueSessions'>;

/** Timing of the sweep (config `server.*`). */
export interface SweepTiming {
  /** `server.callLeaseMs`: how long this gateway's hold on its calls stands without a renewal. */
  leaseMs: number;
  /** `server.dropGraceMs`: a gone gateway's calls are ended this long after its lease ran out. */
  graceMs: number;
  /** `server.sweepIntervalMs`. */
  intervalMs: number;
}

/** Sessions ended per store read; a longer backlog is worked through read after read, in the same sweep. */
const BATCH = 100;

/**
 * Ends the calls no gateway will end any more (issue 18: "dropped calls forgotten"). A gateway that
 * holds a call's socket is named on the session with each start and keeps a lease in the shared
 * store; a socket that closes without `end` leaves a durable deferred end there too. Every gateway
 * runs this sweep, at start-up and every `intervalMs`: calls whose deferred end is due, and calls held
 * by a gateway whose lease ran out `graceMs` ago (killed, crashed: its sockets went with it), are ended
 * with reason `dropped`. Each end is conditional on the generation the sweep read, decided by the
 * store, so a call started again anywhere since is kept, and of several gateways sweeping one call
 * exactly one ends it (and emits `session.ended`).
 */
export class CallSweeper {
  private renewTimer: NodeJS.Timeout | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private stopped = false;
  private leaseWarned = false;
  private sweepWarned = false;

  constructor(
    private readonly store: CallStore,
    private readonly service: Pick<ObservedService, 'endSession'>,
    private readonly logger: Logger,
    /** This gateway's id in the store (new per process). */
    readonly holder: string,
    private readonly timing: SweepTiming,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Take the lease before any call is held, then keep renewing it and sweeping; the first sweep runs now.
   * A store that cannot be reached does not stop the gateway from serving: the renewals keep trying.
   */
  async start(): Promise<void> {
    await this.renew().catch((err: unknown) => this.renewFailed(err));
    this.renewTimer = setInterval(() => void this.renew().catch((err: unknown) => this.renewFailed(err)), Math.max(1, Math.floor(this.timing.leaseMs / 3))).unref();
    this.sweepTimer = setInterval(() => void this.sweep(), this.timing.intervalMs).unref();
    void this.sweep();
  }

  /** One sweep that starts now or, while one runs, right after it (at most one waits): ends every call due. */
  sweep(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.sweeping === null) {
      this.sweeping = this.sweepNow().finally(() => (this.sweeping = null));
      return this.sweeping;
    }
    this.queued ??= this.sweeping.then(() => {
      this.queued = null;
      return this.sweep();
    });
    return this.queued;
  }

  /** Stop renewing and sweeping (the lease then runs out by itself: this gateway's calls were ended or dropped by its shutdown). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.renewTimer) clearInterval(this.renewTimer);
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    await this.queued;
    await this.sweeping;
  }

  private async renew(): Promise<void> {
    await this.store.renewLease(this.holder, this.now() + this.timing.leaseMs);
    if (this.leaseWarned) this.logger.info('call lease renewed again', { holder: this.holder });
    this.leaseWarned = false;
  }

  private renewFailed(err: unknown): void {
    // Once per outage: a lease that runs out lets other gateways end this gateway's calls as dropped.
    if (!this.leaseWarned) this.logger.warn('could not renew the call lease; if it runs out, other gateways end this gateway’s calls', { err, holder: this.holder });
    this.leaseWarned = true;
  }

  private async sweepNow(): Promise<void> {
    try {
      for (let round = 0; !this.stopped && round < 20; round++) {
        const due = await this.store.dueSessions(this.now(), this.timing.graceMs, BATCH);
        for (const call of due) {
          if (this.stopped) return;
          const { scope, sessionId, generation } = call;
          // The observed service emits `session.ended` (reason dropped) only if this end took effect.
          const ended = await this.service.endSession(scope, sessionId, { ifGeneration: generation, reason: 'dropped' });
          if (ended) {
            const why = call.dueAt === undefined ? 'its gateway is gone' : 'its grace ran out';
            this.logger.info('swept a dropped call', { tenantId: scope.tenantId, sessionId, generation, why, ...(call.holder === undefined ? {} : { heldBy: call.holder }) });
          }
        }
        this.sweepWarned = false;
        if (due.length < BATCH) return;
      }
    } catch (err) {
      // The store is unreachable: the next sweep tries again, nothing is lost (the records are durable). Said once per outage.
      if (!this.sweepWarned) this.logger.warn('sweep for dropped calls failed; retrying on every sweep', { err });
      this.sweepWarned = true;
    }
  }
}
