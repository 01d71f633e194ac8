import { toMemgateError } from '../core/errors.ts';
import type { Scope } from '../core/types.ts';
import type { Consumer, JobBus } from '../ports/job-bus.ts';
import { runExtractionWhenFree, type ExtractionDeps } from '../pipeline/extraction-job.ts';
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
 * the backlog drains in bounded runs, one job per user at a time.
 */
export function startExtractionWorker(
  bus: JobBus,
  deps: ExtractionDeps,
  options: WorkerOptions,
  run: (scope: Scope, maxWaitMs: number) => Promise<ExtractionReport> = (scope, maxWaitMs) => runExtractionWhenFree(deps, scope, maxWaitMs),
): Consumer {
  const { ports, logger } = deps;
  return bus.consume(async (job, ctl) => {
    try {
      const report = await run(job.scope, options.flushDeadlineMs);
      if (report.turnsLeft > 0) await bus.publish({ scope: job.scope, reason: 'backlog', requestedAt: Date.now() });
    } catch (err) {
      const e = toMemgateError(err);
      const { tenantId, agentId, userId } = job.scope;
      logger.warn('extraction failed', { err: e, attempt: ctl.attempt, retryable: e.retryable, tenantId, agentId, userId });
      ports.events.publish(extractionFailedEvent(job.scope, e, Date.now(), { attempt: ctl.attempt }));
      throw e;
    }
  }, options);
}
