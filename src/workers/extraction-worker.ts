import { MemgateError, toMemgateError } from '../core/errors.ts';
import type { Consumer } from '../ports/job-bus.ts';
import { runExtraction, type ExtractionDeps } from '../pipeline/extraction-job.ts';

/** Worker knobs (config.worker). */
export interface WorkerOptions {
  concurrency: number;
  maxDeliver: number;
  retryDelayMs: number;
}

/**
 * Bus consumer → pipeline. A job whose user is locked by another run is handed
 * back for redelivery (the holder may have read the buffer before the turns
 * that triggered this job); a retryable failure is redelivered by the bus; a
 * permanent one still throws so the bus dead-letters it. In every case the
 * turns stay in the buffer: nothing is lost, the next job picks them up.
 */
export function startExtractionWorker(deps: ExtractionDeps, options: WorkerOptions): Consumer {
  const { ports, logger } = deps;
  return ports.bus.consume(
    async (job, ctl) => {
      try {
        const report = await runExtraction(deps, job.scope);
        if (report.skipped === 'locked') throw new MemgateError('conflict', 'user is being extracted by another run');
      } catch (err) {
        const e = toMemgateError(err);
        if (e.code !== 'conflict') {
          logger.warn('extraction failed', { err: e, attempt: ctl.attempt, retryable: e.retryable, tenantId: job.scope.tenantId, agentId: job.scope.agentId, userId: job.scope.userId });
          ports.events.publish({ type: 'extraction.failed', tenantId: job.scope.tenantId, agentId: job.scope.agentId, userId: job.scope.userId, at: Date.now(), data: { code: e.code, attempt: ctl.attempt, retryable: e.retryable } });
        }
        throw e;
      }
    },
    options,
  );
}
