import { toMemgateError } from '../core/errors.ts';
import type { Scope } from '../core/types.ts';
import { jobKey, type Consumer, type JobBus } from '../ports/job-bus.ts';
import { runExtractionWhenFree, type ExtractionDeps } from '../pipeline/extraction-job.ts';
import { modeOfJob, type SemanticMode } from '../pipeline/deferred-acus.ts';
import type { ExtractionReport } from '../pipeline/extraction-report.ts';
import { extractionFailedEvent } from '../pipeline/extraction-report.ts';

/** Worker knobs (config.worker). */
export interface WorkerOptions {
  concurrency: number;
  maxDeliver: number;
  retryDelayMs: number;
  /** How long a job waits for a run of the same user in progress (a flush) before failing retryably. */
  flushDeadlineMs: number;
}

/**
 * Bus consumer → pipeline. A job whose user is locked by another run waits for
 * it (bounded by the lock TTL); a retryable failure is redelivered by the bus; a
 * permanent one still throws so the bus dead-letters it. In every case the
 * turns stay in the buffer: nothing is lost, the next job picks them up.
 * `run` is where the extraction itself happens: here by default; the embedded
 * thread lane passes its own, so the bus, retries and failure events stay here.
 * A run that left turns past its cap (a user far behind) queues the next at once:
 * the backlog drains in bounded runs, one job per user at a time. A job that waited past
 * `embeddings.deferAfterMs` (or continues a capped run) indexes with the cheap vector; ACUs
 * left waiting for the encoder get an `encode` job of their own while the lane keeps up.
 */
export function startExtractionWorker(
  bus: JobBus,
  deps: ExtractionDeps,
  options: WorkerOptions,
  run: (scope: Scope, maxWaitMs: number, mode: SemanticMode) => Promise<ExtractionReport> = (scope, maxWaitMs, mode) => runExtractionWhenFree(deps, scope, maxWaitMs, mode),
): Consumer {
  const { ports, logger } = deps;
  const encoder = new IdleEncoder(bus, options.concurrency);
  const consumer = bus.consume(async (job, ctl) => {
    try {
      const mode = modeOfJob(job, Date.now(), deps.deferral);
      const report = await run(job.scope, options.flushDeadlineMs, mode);
      encoder.note(job.scope, report.acusAwaitingEncoder);
      if (report.turnsLeft > 0) await bus.publish({ scope: job.scope, reason: 'backlog', requestedAt: Date.now() });
      // The lane kept up and the run re-embedded some: queue the rest at once (it defers itself if the queue is long by then).
      else if (report.acusAwaitingEncoder > 0 && report.acusUpgraded > 0) await bus.publish({ scope: job.scope, reason: 'encode', requestedAt: Date.now() });
    } catch (err) {
      const e = toMemgateError(err);
      const { tenantId, agentId, userId } = job.scope;
      logger.warn('extraction failed', { err: e, attempt: ctl.attempt, retryable: e.retryable, tenantId, agentId, userId });
      ports.events.publish(extractionFailedEvent(job.scope, e, Date.now(), { attempt: ctl.attempt }));
      throw e;
    }
  }, options);
  return {
    async stop() {
      encoder.stop();
      await consumer.stop();
    },
  };
}

/**
 * Users whose ACUs wait for the encoder, as this worker last saw them: while the queue is
 * empty (the lane is idle) it queues `encode` jobs for a few of them every second. It knows
 * only what ran here since it started; the rest wait for their user's next run or a flush.
 */
class IdleEncoder {
  private static readonly MAX_USERS = 10_000;
  private readonly waiting = new Map<string, Scope>();
  private readonly timer: NodeJS.Timeout;
  private busy = false;

  constructor(
    private readonly bus: JobBus,
    private readonly perTick: number,
  ) {
    this.timer = setInterval(() => void this.tick(), 1000);
    this.timer.unref();
  }

  note(scope: Scope, awaiting: number): void {
    const key = jobKey(scope);
    if (!(awaiting > 0)) this.waiting.delete(key);
    else if (this.waiting.size < IdleEncoder.MAX_USERS) this.waiting.set(key, scope);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async tick(): Promise<void> {
    if (this.busy || this.waiting.size === 0) return;
    this.busy = true;
    try {
      if ((await this.bus.depth()) > 0) return;
      for (const [key, scope] of [...this.waiting].slice(0, this.perTick)) {
        this.waiting.delete(key);
        await this.bus.publish({ scope, reason: 'encode', requestedAt: Date.now() });
      }
    } catch {
      // A bus that cannot answer now is asked again at the next tick; the ACUs keep their cheap vectors meanwhile.
    } finally {
      this.busy = false;
    }
  }
}
