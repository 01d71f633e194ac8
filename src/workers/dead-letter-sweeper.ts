import type { Logger } from '../core/logger.ts';
import type { JobBus } from '../ports/job-bus.ts';

/** Options of {@link startDeadLetterSweeper}. */
export interface SweeperOptions {
  intervalMs: number;
  maxIntervalMs: number;
  /** Jobs requeued per sweep. */
  batch?: number;
}

/**
 * Dead letters are not the end: an LLM endpoint that failed long enough to
 * exhaust a job's deliveries usually heals, and the turns are still buffered.
 * Every `intervalMs` the dead-lettered jobs go back on the queue; while sweeps
 * keep finding letters (the endpoint is still down) the interval doubles up to
 * `maxIntervalMs`, and it resets once a sweep finds none. A healed endpoint
 * thus drains the backlog without new traffic. Returns a stop function.
 */
export function startDeadLetterSweeper(bus: JobBus, options: SweeperOptions, logger: Logger): () => void {
  let interval = options.intervalMs;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  const sweep = async () => {
    try {
      const moved = await bus.requeueDeadLetters(options.batch ?? 100);
      if (moved > 0) logger.info('requeued dead-lettered extraction jobs', { jobs: moved, nextSweepMs: Math.min(interval * 2, options.maxIntervalMs) });
      interval = moved > 0 ? Math.min(interval * 2, options.maxIntervalMs) : options.intervalMs;
    } catch (err) {
      logger.warn('dead-letter sweep failed', { err });
    }
    if (!stopped) schedule();
  };
  const schedule = () => {
    timer = setTimeout(() => void sweep(), interval);
    timer.unref();
  };
  schedule();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
