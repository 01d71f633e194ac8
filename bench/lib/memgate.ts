import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnServer, tsxArgs, type SpawnedServer } from './processes.ts';

/** A memgate server the bench started in its own process, with its own data directory. */
export interface MemgateServer extends SpawnedServer {
  /** http://HOST:PORT */
  readonly url: string;
  /** ws://HOST:PORT/v1/ws */
  readonly wsUrl: string;
  readonly dataDir: string;
}

/** Options of startMemgate. */
export interface MemgateOptions {
  /** Written to a config file passed with --config (adapters, redis, nats, memory knobs). */
  config?: Record<string, unknown>;
  env?: Record<string, string>;
  /** An existing SQLite file to serve (pre-seeded users); default: a fresh one in `dataDir`. */
  sqlitePath?: string;
  /** A module `--import`ed before memgate (a host's OpenTelemetry SDK, bench/tracing/otel-sdk.mjs). */
  preload?: string;
}

/**
 * `node --import tsx src/app/main.ts serve --port 0` with a private SQLite file, warn-level
 * logs, loopback only; resolves once it printed its listening line.
 */
export async function startMemgate(dataDir: string, opts: MemgateOptions = {}): Promise<MemgateServer> {
  mkdirSync(dataDir, { recursive: true });
  const args = ['serve', '--port', '0', '--host', '127.0.0.1'];
  if (opts.config) {
    const file = join(dataDir, 'memgate.config.json');
    writeFileSync(file, JSON.stringify(opts.config, null, 2));
    args.push('--config', file);
  }
  const server = await spawnServer({
    name: 'memgate',
    command: process.execPath,
    args: [...(opts.preload ? ['--import', opts.preload] : []), ...tsxArgs('src/app/main.ts', args)],
    env: { MEMGATE_SQLITE_PATH: opts.sqlitePath ?? join(dataDir, 'memgate.db'), MEMGATE_LOG_LEVEL: 'warn', ...opts.env },
  });
  const url = `http://${server.host}:${server.port}`;
  return Object.assign(server, { url, wsUrl: `ws://${server.host}:${server.port}/v1/ws`, dataDir });
}

/** The raw uWebSockets.js echo / trivial-route baseline (bench/baselines/uws-echo.ts); `replyBytes` > 0 = canned replies of that size. */
export async function startEcho(replyBytes = 0): Promise<SpawnedServer & { url: string; wsUrl: string }> {
  const server = await spawnServer({ name: 'uws-echo', command: process.execPath, args: tsxArgs('bench/baselines/uws-echo.ts'), env: { ECHO_REPLY_BYTES: String(replyBytes) } });
  return Object.assign(server, { url: `http://${server.host}:${server.port}`, wsUrl: `ws://${server.host}:${server.port}/v1/ws` });
}

/** POST JSON and parse the JSON reply; a non-2xx status throws with the body. */
export async function postJson<T>(url: string, body: unknown, timeoutMs = 120_000): Promise<T> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${url} → ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** GET JSON and parse the reply; a non-2xx status throws with the body. */
export async function getJson<T>(url: string, timeoutMs = 30_000): Promise<T> {
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${url} → ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** PUT JSON; a non-2xx status throws with the body. */
export async function putJson(url: string, body: unknown): Promise<void> {
  const res = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
  if (!res.ok) throw new Error(`PUT ${url} → ${res.status}: ${(await res.text()).slice(0, 300)}`);
}
