import type { Logger } from '../core/logger.ts';

/** Counts requests whose reply is still pending, so shutdown can wait for them. */
export class InFlight {
  private n = 0;
  private waiters: Array<() => void> = [];

  enter(): void {
    this.n++;
  }

  leave(): void {
    if (--this.n === 0) for (const w of this.waiters.splice(0)) w();
  }

  get count(): number {
    return this.n;
  }

  /** Resolves true once nothing is in flight, or false after `timeoutMs`. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.n === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}

/** Signals closer together than this are one request: Ctrl-C reaches both npm and its child, and npm forwards it. */
export const SIGNAL_ECHO_MS = 1_000;

/**
 * Run `stop` once on SIGTERM or SIGINT, then exit 0 (1 if stopping failed).
 * A second signal while stopping exits at once (the operator insists, and every
 * acked turn is already durable), unless it is the echo of the first.
 */
export function exitOnSignals(stop: () => Promise<void>, logger: Logger, exit: (code: number) => void = (c) => process.exit(c), now: () => number = Date.now): () => void {
  let stoppingSince: number | null = null;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stoppingSince !== null) {
      if (now() - stoppingSince < SIGNAL_ECHO_MS) return;
      logger.warn('second signal: exiting now', { signal });
      exit(1);
      return;
    }
    stoppingSince = now();
    logger.info('shutting down', { signal });
    stop().then(
      () => {
        logger.info('stopped');
        exit(0);
      },
      (err: unknown) => {
        logger.error('shutdown failed', { err });
        exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
}
