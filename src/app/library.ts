import { fileURLToPath } from 'node:url';
import { createLogger } from '../core/logger.ts';
import { configSchema, type Config } from '../config/config-schema.ts';
import { startGateway, type Gateway } from '../gateway/server.ts';
import type { MemoryApi } from '../service/api.ts';
import { createRuntime } from './wiring.ts';

/** Options of {@link createMemgate}: any part of the configuration (the rest takes the embedded defaults). */
export type MemgateOptions = Record<string, unknown>;

/** An embedded memgate: the service API in this process, and optionally the gateway on a port. */
export interface Memgate {
  readonly config: Readonly<Config>;
  /** Sessions, appends, search, flush, timeline, schema, forget: the same API the gateway serves. */
  readonly service: MemoryApi;
  /** Serve the WebSocket and HTTP protocol too; resolves once listening. */
  listen(options?: { port?: number; host?: string }): Promise<{ host: string; port: number; url: string }>;
  /** Stop the gateway (if listening), let in-flight extraction commit, close the stores. */
  close(): Promise<void>;
}

/**
 * The embeddable library: `await createMemgate({ sqlite: { path: './memory.db' } })`.
 * Configuration is validated like the CLI's (defaults ← what you pass); extraction
 * workers start in-process when the configuration says so (the embedded default).
 */
export async function createMemgate(options: MemgateOptions = {}): Promise<Memgate> {
  // The CLI reads ./config/schemas of its working directory; a library user gets the schemas this package ships.
  const config = configSchema.parse({ schemasDir: fileURLToPath(new URL('../../config/schemas', import.meta.url)), ...options });
  const runtime = await createRuntime(config, { logger: createLogger(config.log.level, { service: 'memgate' }) });
  if (config.server.inlineWorkers) runtime.startWorkers();
  let gateway: Gateway | null = null;
  return {
    config,
    service: runtime.service,
    async listen(opts = {}) {
      if (gateway) throw new Error('memgate is already listening');
      const server = { ...config.server, port: opts.port ?? config.server.port, host: opts.host ?? config.server.host };
      gateway = await startGateway({ ...runtime, config: { ...config, server } });
      return { host: gateway.host, port: gateway.port, url: `http://${gateway.host}:${gateway.port}` };
    },
    async close() {
      await gateway?.close();
      await runtime.close();
    },
  };
}
