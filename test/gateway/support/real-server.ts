import { createHash, randomUUID } from 'node:crypto';
import { testConfig } from '../../support/config.ts';
import { startGateway, type Gateway } from '../../../src/gateway/server.ts';
import { createRuntime, type Runtime } from '../../../src/app/wiring.ts';

/** A gateway over the real embedded runtime (SQLite `:memory:`), on a free port. */
export interface TestServer {
  runtime: Runtime;
  gateway: Gateway;
  /** `ws://127.0.0.1:PORT/v1/ws` */
  wsUrl: string;
  /** `http://127.0.0.1:PORT` */
  base: string;
  close(): Promise<void>;
}

/** sha256 hex of an API key, as `config.auth.keys` holds it. */
export const sha256 = (key: string): string => createHash('sha256').update(key).digest('hex');

/** A random id prefix so test files never share users (each server has its own DB anyway). */
export const uniq = (prefix: string): string => `${prefix}_${randomUUID().slice(0, 8)}`;

/** Start the embedded runtime and a gateway; `keys` maps raw API keys to tenants (none = open dev mode). */
export async function startTestServer(opts: { keys?: Record<string, string>; workers?: boolean; config?: Record<string, unknown> } = {}): Promise<TestServer> {
  const keys = Object.entries(opts.keys ?? {}).map(([key, tenantId]) => ({ sha256: sha256(key), tenantId }));
  const extra = opts.config ?? {};
  const server = { port: 0, ...(extra['server'] as object | undefined) };
  const config = testConfig({ sqlite: { path: ':memory:' }, log: { level: 'silent' }, auth: { keys }, ...extra, server });
  const runtime = await createRuntime(config);
  if (opts.workers) runtime.startWorkers();
  const gateway = await startGateway(runtime);
  return {
    runtime,
    gateway,
    wsUrl: `ws://127.0.0.1:${gateway.port}/v1/ws`,
    base: `http://127.0.0.1:${gateway.port}`,
    async close() {
      await gateway.close({ drainTimeoutMs: 2000 });
      await runtime.close();
    },
  };
}
