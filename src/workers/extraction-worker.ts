import { toMemgateError } from '../core/errors.ts';
import type { Consumer } from '../ports/job-bus.ts';
import { runExtractionWhenFree, type ExtractionDeps } from '../pipeline/extraction-job.ts';

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
 */
export function startExtractionWorker(deps: ExtractionDeps, options: WorkerOptions): Consumer {
  const { ports, logger } = deps;
  return ports.bus.consume(
    async (job, ctl) => {
      try {
        await runExtractionWhenFree(deps, job.scope, deps.lockTtlMs);
      } catch (err) {
        const e = toMemgateError(err);
        const { tenantId, agentId, userId } = job.scope;
        logger.warn('extraction failed', { err: e, attempt: ctl.attempt, retryable: e.retryable, tenantId, agentId, userId });
        ports.events.publish({ type: 'extraction.failed', tenantId, agentId, userId, at: Date.now(), data: { code: e.code, attempt: ctl.attempt, retryable: e.retryable } });
        throw e;
      }
    },
    options,
  );
}
