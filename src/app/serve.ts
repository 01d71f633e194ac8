import { createLogger } from '../core/logger.ts';
import type { Config } from '../config/config-schema.ts';
import { createRuntime, usesThreadLane } from './wiring.ts';
import { callPathTids } from '../core/call-path-threads.ts';
import { idleHelperThreads } from '../workers/thread-priority.ts';
import { describeEngine } from './llm-probe.ts';
import { startGateway } from '../gateway/server.ts';
import { exitOnSignals } from '../gateway/shutdown.ts';

/**
 * `memgate serve`: wire the runtime, start workers when they run in-process,
 * listen, print `memgate listening on http://HOST:PORT` as the first line of
 * stdout (logs go to stderr), and shut down gracefully on SIGTERM/SIGINT:
 * stop accepting, finish in-flight requests, close connections, then close the
 * runtime (which flushes the embedded store) and exit 0.
 */
export async function serve(config: Readonly<Config>): Promise<void> {
  const logger = createLogger(config.log.level, { service: 'memgate' });
  const runtime = await createRuntime(config, { logger });
  if (config.server.inlineWorkers) runtime.startWorkers();
  let gateway;
  try {
    gateway = await startGateway(runtime);
  } catch (err) {
    await runtime.close();
    throw err;
  }
  process.stdout.write(`memgate listening on http://${gateway.host}:${gateway.port}\n`);
  if (config.server.inlineWorkers && usesThreadLane(config) && config.worker.idlePolicy) void idleHelpers(runtime, logger);
  // Which extractor and embedder answer, and where: a misrouted LLM shows here, not as silent empty memory.
  logger.info('memory engine', describeEngine(config));
  const g = gateway;
  exitOnSignals(async () => {
    await g.close();
    await runtime.close();
  }, logger);
}

/**
 * With the embedded lane on this process: once its thread is up, every helper thread
 * (GC, libuv's pool, the memory file's checkpointer) goes under SCHED_IDLE, the event loop
 * and the call-path threads (embed thread, turns checkpointer) excepted (idleHelperThreads
 * says why).
 */
async function idleHelpers(runtime: Awaited<ReturnType<typeof createRuntime>>, logger: ReturnType<typeof createLogger>): Promise<void> {
  await runtime.workersReady();
  const idled = await idleHelperThreads(await callPathTids());
  if (idled.error) logger.warn('some helper threads keep the gateway policy', { reason: idled.error, idled: idled.tids.length });
  else logger.debug('helper threads under SCHED_IDLE', { threads: idled.tids.length });
}
