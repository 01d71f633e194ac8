import type { Config } from '../config/config-schema.ts';
import { createRuntime } from './wiring.ts';
import { describeEngine } from './llm-probe.ts';

/**
 * `memgate worker`: a process that only consumes extraction jobs. It reads the
 * same configuration as the gateway; on SIGTERM it stops taking jobs, lets the
 * in-flight one commit, closes the ports and exits 0.
 */
export async function runWorker(config: Config): Promise<void> {
  const runtime = await createRuntime(config);
  runtime.startWorkers();
  runtime.logger.info('worker started', { profile: config.profile, bus: config.adapters.bus, concurrency: config.worker.concurrency, ...describeEngine(config) });
  await new Promise<void>((resolve) => {
    const stop = () => {
      runtime.logger.info('worker stopping');
      runtime.close().then(resolve, (err: unknown) => {
        runtime.logger.error('worker close failed', { err });
        resolve();
      });
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
