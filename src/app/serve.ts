import { createLogger } from '../core/logger.ts';
import type { Config } from '../config/config-schema.ts';
import { createRuntime } from './wiring.ts';
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
  // Which extractor and embedder answer, and where: a misrouted LLM shows here, not as silent empty memory.
  logger.info('memory engine', describeEngine(config));
  const g = gateway;
  exitOnSignals(async () => {
    await g.close();
    await runtime.close();
  }, logger);
}
