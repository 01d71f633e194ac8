import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createLogger } from '../core/logger.ts';
import type { Config } from '../config/config-schema.ts';
import { DEV_TENANT } from '../gateway/auth.ts';
import { exitOnSignals } from '../gateway/shutdown.ts';
import type { MemoryBackend } from '../mcp/backend.ts';
import { httpBackend } from '../mcp/http-backend.ts';
import { serviceBackend } from '../mcp/service-backend.ts';
import { createMemgateMcpServer } from '../mcp/tools.ts';
import { createRuntime, type Runtime } from './wiring.ts';

/** Where `memgate mcp` finds the memory (environment variables, as MCP clients set them in their server config). */
export interface McpTarget {
  /** A running gateway; absent: open the embedded store in this process. */
  url?: string;
  apiKey?: string;
  /** Tenant of the embedded store's data (the gateway decides it from the key otherwise). */
  tenantId?: string;
}

/**
 * `memgate mcp`: an MCP server on stdin/stdout, for clients that spawn their servers (Claude
 * Desktop, Claude Code, IDEs). stdout carries protocol frames only; logs go to stderr. It ends
 * when the client closes stdin (or on SIGTERM/SIGINT), closing the embedded store cleanly.
 */
export async function runMcp(config: Readonly<Config>, target: McpTarget): Promise<void> {
  const logger = createLogger(config.log.level, { service: 'memgate', component: 'mcp' });
  let runtime: Runtime | null = null;
  let backend: MemoryBackend;
  if (target.url) {
    backend = httpBackend(target.url, target.apiKey);
    logger.info('mcp on stdio, against a gateway', { url: target.url });
  } else {
    runtime = await createRuntime(config, { logger });
    // Remembered turns are extracted here as a gateway would, at the token threshold.
    if (config.server.inlineWorkers) runtime.startWorkers();
    backend = serviceBackend(runtime.service, target.tenantId ?? DEV_TENANT);
    logger.info('mcp on stdio, embedded store', { data: config.sqlite.path, tenantId: target.tenantId ?? DEV_TENANT });
  }
  const handle = serveStdio(() => createMemgateMcpServer(backend, { logger }), { onerror: (err) => logger.warn('mcp stdio error', { err }) });
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      await handle.close().catch((err: unknown) => logger.warn('mcp close failed', { err }));
      await runtime?.close();
    })());
  exitOnSignals(stop, logger);
  // The client closing stdin is the normal end of a stdio server.
  process.stdin.once('end', () => {
    logger.info('stdin closed: stopping');
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error('shutdown failed', { err });
        process.exit(1);
      },
    );
  });
}
