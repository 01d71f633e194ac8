import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createRedis } from '../../src/adapters/redis/create-redis.ts';
import { RedisTurnBuffer } from '../../src/adapters/redis/redis-turn-buffer.ts';
import { MemgateError } from '../../src/core/errors.ts';
import { randomScope } from '../support/fixtures.ts';
import { closedPort } from '../support/net.ts';
import { describeWithServer } from '../support/servers.ts';
import { waitFor } from '../support/wait.ts';
import { spread, writeFaultFigures } from './report.ts';
import { removeDir } from '../support/tmp.ts';

/**
 * Redis outages on the append path, against a private redis-server this file
 * kills, freezes and restarts: an append is answered `unavailable` at once when
 * the connection is lost and within the deadline when Redis hangs; the client's
 * retry by turnId after recovery is stored once.
 */
describeWithServer('redis', 'fault: Redis outage on the append path', () => {
  let port: number;
  let dir: string;
  let server: ChildProcess | null = null;
  let redis: Redis;
  let buffer: RedisTurnBuffer;
  const scope = randomScope();
  const turn = (turnId: string) => ({ turnId, sessionId: 's1', role: 'user' as const, text: `turn ${turnId}`, ts: Date.now(), receivedAt: Date.now(), tokens: 3 });

  async function startRedis(): Promise<void> {
    server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', ''], { stdio: 'ignore' });
    await waitFor(async () => (await ping()) === true, 10_000);
  }
  function ping(): Promise<boolean> {
    const probe = createRedis(`redis://127.0.0.1:${port}`, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    return probe.connect().then(
      () => probe.ping().then(() => (probe.disconnect(), true)),
      () => (probe.disconnect(), false),
    );
  }
  async function stopRedis(signal: NodeJS.Signals): Promise<void> {
    const s = server!;
    server = null;
    await new Promise<void>((resolve) => {
      s.once('exit', () => resolve());
      s.kill(signal);
    });
  }

  beforeAll(async () => {
    port = await closedPort();
    dir = mkdtempSync(join(tmpdir(), 'memgate-redis-fault-'));
    await startRedis();
    redis = createRedis(`redis://127.0.0.1:${port}`, { retryStrategy: () => 100 });
    buffer = new RedisTurnBuffer(redis, 'fault:', { appendDeadlineMs: 250 });
  });
  afterAll(async () => {
    redis?.disconnect();
    if (server) await stopRedis('SIGKILL');
    removeDir(dir);
  });

  it('down, frozen, back: appends are refused quickly, retries land once, nothing acked is lost', async () => {
    const acked = new Set<string>();
    const refusedMs: number[] = [];
    const append = async (id: string): Promise<'acked' | 'refused'> => {
      const t0 = performance.now();
      try {
        await buffer.append(scope, 's1', turn(id));
        acked.add(id);
        return 'acked';
      } catch (err) {
        expect(err).toBeInstanceOf(MemgateError);
        expect((err as MemgateError).code).toBe('unavailable');
        refusedMs.push(performance.now() - t0);
        return 'refused';
      }
    };
    for (let i = 0; i < 20; i++) expect(await append(`before-${i}`)).toBe('acked');

    // Killed: the connection is lost, every append is refused.
    await stopRedis('SIGKILL');
    await waitFor(() => redis.status !== 'ready', 5_000);
    const down = await Promise.all(Array.from({ length: 50 }, (_, i) => append(`down-${i}`)));
    expect(down.every((r) => r === 'refused')).toBe(true);

    // Restarted on the same AOF: the client reconnects by itself; its retries are stored.
    const t0 = performance.now();
    await startRedis();
    await waitFor(() => redis.status === 'ready', 10_000);
    const reconnectMs = performance.now() - t0;
    for (let i = 0; i < 50; i++) expect(await append(`down-${i}`)).toBe('acked');

    // Frozen (SIGSTOP): the socket looks healthy, the deadline answers instead.
    server!.kill('SIGSTOP');
    const frozen = await Promise.all(Array.from({ length: 20 }, (_, i) => append(`frozen-${i}`)));
    expect(frozen.every((r) => r === 'refused')).toBe(true);
    server!.kill('SIGCONT');
    // The frozen writes land late; the client's retries are duplicates of them, never second turns.
    const retried = await Promise.all(Array.from({ length: 20 }, (_, i) => buffer.append(scope, 's1', turn(`frozen-${i}`))));
    expect(retried.every((r) => r.duplicate)).toBe(true);
    for (let i = 0; i < 20; i++) acked.add(`frozen-${i}`);

    const stored = (await buffer.list(scope)).map((t) => t.turnId);
    expect(new Set(stored).size).toBe(stored.length);
    const lost = [...acked].filter((id) => !stored.includes(id));
    expect(lost).toEqual([]);
    writeFaultFigures({
      suite: 'redis-outage',
      cases: 20 + 50 + 50 + 20 + 20,
      failures: 0,
      turnsLost: lost.length,
      recovery: `client reconnected ${reconnectMs.toFixed(0)} ms after Redis restarted`,
      notes: `refused appends answered unavailable in ${spread(refusedMs)} (deadline 250 ms); retries after recovery stored once`,
    });
  }, 60_000);
});
