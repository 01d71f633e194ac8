import { toMemgateError } from '../core/errors.ts';
import type { Scope } from '../core/types.ts';
import type { Consumer } from '../ports/job-bus.ts';
import { runExtractionWhenFree, type ExtractionDeps } from '../pipeline/extraction-job.ts';
import { extractionFailedEvent } from '../pipeline/extraction-report.ts';

/** Worker knobs (config.worker). */
export interface WorkerOptions {
  concurrency: number;
  maxDeliver: number;
  retryDelayMs: number;
}

/**
 * Bus consumer → pipeline. A job whose user is locked by another run waits for
 * it (bounded by the lock TTL); a retryable failure is redelivered by the bus; a
 * permanent one still throws so the bus dead-letters it. In every case the
 * turns stay in the buffer: nothing is lost, the next job picks them up.
 * `run` is where the extraction itself happens: here by default; the embedded
 * thread lane passes its own, so the bus, retries and failure events stay here.
 */
export function startExtractionWorker(deps: ExtractionDeps, options: WorkerOptions, run: (scope: Scope) => Promise<unknown> = (scope) => runExtractionWhenFree(deps, scope, deps.lockTtlMs)): Consumer {
  const { ports, logger } = deps;
  return ports.bus.consume(async (job, ctl) => {
    try {
      await run(job.scope);
    } catch (err) {
      const e = toMemgateError(err);
      const { tenantId, agentId, userId } = job.scope;
      logger.warn('extraction failed', { err: e, attempt: ctl.attempt, retryable: e.retryable, tenantId, agentId, userId });
      ports.events.publish(extractionFailedEvent(job.scope, e, Date.now(), { attempt: ctl.attempt }));
      throw e;
    }
  }, options);
}
