/**
 * Private redis-server and nats-server (JetStream) processes for the
 * production-stack rows: free loopback ports, temp data dirs, started and
 * stopped by the bench, never shared with the test servers of
 * scripts/test-servers.sh.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ownChild } from '../lib/processes.ts';
import { say } from '../lib/progress.ts';

/** A server process the bench owns. */
export interface OwnedServer {
  url: string;
  stop(): Promise<void>;
}

/** True when `cmd` is on PATH. */
export function onPath(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Why the private servers cannot run here (redis-server or nats-server not installed), or null. */
export function serversMissing(): string | null {
  const missing = ['redis-server', 'nats-server'].filter((c) => !onPath(c));
  return missing.length === 0 ? null : `${missing.join(' and ')} not on PATH (apt-get install -y redis-server nats-server)`;
}

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} not ready after ${timeoutMs} ms`);
}

function owned(command: string, args: string[]): { stop(): Promise<void> } {
  const child = ownChild(spawn(command, args, { stdio: 'ignore' }));
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
}

/** redis-server with the persistence the turn buffer needs in production (AOF, fsync every second). */
export async function startRedis(dir: string): Promise<OwnedServer> {
  const port = await freePort();
  mkdirSync(join(dir, 'redis'), { recursive: true });
  const proc = owned('redis-server', [
    '--bind',
    '127.0.0.1',
    '--port',
    String(port),
    '--appendonly',
    'yes',
    '--appendfsync',
    'everysec',
    '--dir',
    join(dir, 'redis'),
    '--save',
    '',
    '--daemonize',
    'no',
  ]);
  const url = `redis://127.0.0.1:${port}`;
  await waitFor('redis', async () => {
    const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on('error', () => undefined); // refused while the server starts: the poll retries
    try {
      await r.connect();
      return (await r.ping()) === 'PONG';
    } finally {
      r.disconnect();
    }
  });
  return { url, stop: proc.stop };
}

/** nats-server with JetStream; ready when /jsz names its store dir (healthz answers ok without JetStream). */
export async function startNats(dir: string): Promise<OwnedServer> {
  const port = await freePort();
  const monitor = await freePort();
  mkdirSync(join(dir, 'nats'), { recursive: true });
  const proc = owned('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-m', String(monitor), '-sd', join(dir, 'nats')]);
  await waitFor('nats', async () => (await (await fetch(`http://127.0.0.1:${monitor}/jsz`)).text()).includes('store_dir'));
  return { url: `nats://127.0.0.1:${port}`, stop: proc.stop };
}

/** A private redis-server, then nats-server, in `dir`: each is pushed on `owned` once started, so a failure still stops the first. */
export async function startRedisAndNats(dir: string, owned: OwnedServer[]): Promise<{ redis: OwnedServer; nats: OwnedServer }> {
  say('  starting redis-server and nats-server (private, loopback)');
  const redis = await startRedis(dir);
  owned.push(redis);
  const nats = await startNats(dir);
  owned.push(nats);
  return { redis, nats };
}
