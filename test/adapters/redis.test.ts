import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, redisPersistence } from '../../src/adapters/redis/create-redis.ts';
import { heldKey, sweepKeys, userKeys } from '../../src/adapters/redis/keys.ts';
import { RedisContextCache } from '../../src/adapters/redis/redis-context-cache.ts';
import { RedisTurnBuffer } from '../../src/adapters/redis/redis-turn-buffer.ts';
import { RedisUserLock } from '../../src/adapters/redis/redis-user-lock.ts';
import { contextCacheContract } from '../contract/context-cache.contract.ts';
import { turnBufferContract } from '../contract/turn-buffer.contract.ts';
import { userLockContract } from '../contract/user-lock.contract.ts';
import { decodeContext, packContext, unpackContext } from '../../src/memory/encoded-context.ts';
import { makeSessionContext, makeTurnInput, randomScope, rid } from '../support/fixtures.ts';
import { describeWithServer } from '../support/servers.ts';
import { waitFor } from '../support/wait.ts';

/** Deletes every key under `prefix` (this file's namespace on the shared server). */
async function dropPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

/** The cluster hash tag of a key: the text between the first `{` and the next `}`. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
}

describeWithServer('redis', 'Redis adapters', (url) => {
  const prefix = `mgtest:${rid()}:`;
  const connections: Redis[] = [];
  const connect = (): Redis => {
    const redis = createRedis(url, { connectionName: 'memgate-test' });
    connections.push(redis);
    return redis;
  };
  let redis: Redis;

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await dropPrefix(redis, prefix);
    await Promise.all(connections.map(async (c) => (c.status === 'end' ? undefined : c.quit())));
  });

  turnBufferContract('RedisTurnBuffer', async () => new RedisTurnBuffer(redis, prefix));
  contextCacheContract('RedisContextCache', async () => new RedisContextCache(redis, prefix));
  userLockContract('RedisUserLock', async () => new RedisUserLock(redis, prefix));

  describe('RedisTurnBuffer (adapter-only)', () => {
    it('keeps the sweep indexes bounded: a live gateway’s held set loses each call it stops holding; sweeps drop stale entries', async () => {
      const buffer = new RedisTurnBuffer(redis, prefix);
      const scope = randomScope();
      const holder = rid('gw-');
      const held = heldKey(prefix, holder);
      const [ended, dropped, moved] = [rid('ended-'), rid('dropped-'), rid('moved-')];
      await buffer.renewLease(holder, 10_000);
      for (const sessionId of [ended, dropped, moved]) await buffer.openSession({ sessionId, scope, startedAt: 1, endedAt: null, holder });
      expect(await redis.scard(held)).toBe(3);
      await buffer.endSession(scope.tenantId, ended, 5);
      await buffer.deferEnd(scope.tenantId, dropped, 1, 100);
      expect(await redis.scard(held)).toBe(1);
      // Started again elsewhere: the old holder's entry is stale until a sweep finds the holder gone.
      await buffer.openSession({ sessionId: moved, scope, startedAt: 2, endedAt: null, holder: rid('gw-') });
      await buffer.endSession(scope.tenantId, dropped, 50);
      const due = await buffer.dueSessions(20_000, 1_000, 1000);
      expect(due.filter((r) => r.scope.tenantId === scope.tenantId)).toEqual([]);
      expect(await redis.scard(held)).toBe(0);
      expect(await redis.zscore(sweepKeys(prefix).leases, holder)).toBeNull();
      expect(await redis.zscore(sweepKeys(prefix).due, JSON.stringify([scope.tenantId, dropped]))).toBeNull();
    });

    it('keeps idempotency across a gateway restart (a new connection and buffer)', async () => {
      const scope = randomScope();
      const first = connect();
      const before = new RedisTurnBuffer(first, prefix);
      const input = makeTurnInput({ turnId: 'restart-1', tokens: 11 });
      const original = await before.append(scope, 's-1', input);
      await first.quit();

      const after = new RedisTurnBuffer(connect(), prefix);
      const retry = await after.append(scope, 's-1', { ...input, text: 'retried after restart' });
      expect(retry.duplicate).toBe(true);
      expect(retry.turn).toEqual(original.turn);
      expect(retry.pendingTokens).toBe(11);
      expect((await after.append(scope, 's-1', makeTurnInput({ tokens: 1 }))).turn.seq).toBe(2);
      expect(await after.list(scope)).toHaveLength(2);
    });

    it('gives 200 concurrent appends from two clients distinct seqs and exact token counts', async () => {
      const scope = randomScope();
      const gateways = [new RedisTurnBuffer(connect(), prefix), new RedisTurnBuffer(connect(), prefix)];
      const inputs = Array.from({ length: 200 }, (_, i) => makeTurnInput({ tokens: 1 + (i % 7) }));
      // Every turn is sent by both gateways at once (a client retry racing the original).
      const outcomes = await Promise.all(inputs.flatMap((input) => gateways.map(async (g) => g.append(scope, 's-1', { ...input }))));
      const fresh = outcomes.filter((o) => !o.duplicate);
      expect(fresh).toHaveLength(200);
      expect(new Set(fresh.map((o) => o.turn.seq))).toEqual(new Set(Array.from({ length: 200 }, (_, i) => i + 1)));
      for (let i = 0; i < inputs.length; i++) {
        const pair = outcomes.slice(2 * i, 2 * i + 2);
        expect(pair.filter((o) => o.duplicate)).toHaveLength(1);
        expect(pair[0]!.turn.seq).toBe(pair[1]!.turn.seq);
      }
      const total = inputs.reduce((sum, t) => sum + t.tokens, 0);
      expect(await gateways[0]!.pendingTokens(scope)).toBe(total);
      expect(Math.max(...outcomes.map((o) => o.pendingTokens))).toBe(total);
      expect((await gateways[1]!.list(scope)).map((t) => t.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    });

    it('loses no token when removes race with appends', async () => {
      const scope = randomScope();
      const buffer = new RedisTurnBuffer(redis, prefix);
      const other = new RedisTurnBuffer(connect(), prefix);
      const early = Array.from({ length: 50 }, () => makeTurnInput({ tokens: 3 }));
      for (const t of early) await buffer.append(scope, 's-1', t);
      const late = Array.from({ length: 50 }, () => makeTurnInput({ tokens: 5 }));
      await Promise.all([...late.map(async (t) => other.append(scope, 's-1', t)), ...early.map(async (t) => buffer.remove(scope, [t.turnId]))]);
      expect(await buffer.pendingTokens(scope)).toBe(250);
      expect((await buffer.list(scope)).map((t) => t.turnId).sort()).toEqual(late.map((t) => t.turnId).sort());
    });

    it('puts all of a user’s keys in one cluster slot and leaves no key behind after forget', async () => {
      const scope = randomScope({ userId: 'u:{odd}%id' });
      const buffer = new RedisTurnBuffer(redis, prefix);
      const [a] = [await buffer.append(scope, 's-1', makeTurnInput()), await buffer.append(scope, 's-1', makeTurnInput())];
      await buffer.remove(scope, [a.turn.turnId]);
      await buffer.openSession({ sessionId: rid('s-'), scope, startedAt: 1, endedAt: null });
      const keys = userKeys(prefix, scope);
      const present = [keys.turns, keys.meta, keys.ids, keys.retired, keys.sessions];
      expect(await redis.exists(...present)).toBe(5);
      expect(new Set(present.map(hashTag)).size).toBe(1);
      expect(hashTag(keys.turns)).not.toContain('{');
      for (const key of present) expect(await redis.pttl(key)).toBe(-1);
      await buffer.forget(scope);
      expect(await redis.exists(...present)).toBe(0);
    });

    it("keeps an archived turn's id for the idempotency horizon, then lets it go (bounded memory)", async () => {
      const scope = randomScope();
      let now = 1_000_000;
      const buffer = new RedisTurnBuffer(redis, prefix, { idempotencyHorizonMs: 60_000, now: () => now });
      const keys = userKeys(prefix, scope);
      const old = await buffer.append(scope, 's-1', makeTurnInput({ turnId: 'old-1', tokens: 3 }));
      await buffer.remove(scope, ['old-1']);
      now += 59_000;
      // Within the horizon a retry is still the same turn.
      expect(await buffer.append(scope, 's-1', makeTurnInput({ turnId: 'old-1', tokens: 3 }))).toMatchObject({ duplicate: true, turn: { seq: old.turn.seq } });
      await buffer.append(scope, 's-1', makeTurnInput({ turnId: 'mid-1', tokens: 3 }));
      await buffer.append(scope, 's-1', makeTurnInput({ turnId: 'live-1', tokens: 3 }));
      now += 2_000;
      // This removal is past old-1's horizon: its id leaves the hash and the stamp set.
      await buffer.remove(scope, ['mid-1']);
      expect(await redis.hexists(keys.ids, 'old-1')).toBe(0);
      expect(await redis.zscore(keys.retired, 'old-1')).toBeNull();
      expect(await redis.hexists(keys.ids, 'mid-1')).toBe(1);
      // A buffered turn's id is never dropped, however old: it is not retired until removed.
      expect(await redis.hexists(keys.ids, 'live-1')).toBe(1);
      expect(await buffer.append(scope, 's-1', makeTurnInput({ turnId: 'live-1', tokens: 3 }))).toMatchObject({ duplicate: true });
      expect(await buffer.pendingTokens(scope)).toBe(3);
      // Past the horizon a resent id is a new turn, with a new seq.
      const resent = await buffer.append(scope, 's-1', makeTurnInput({ turnId: 'old-1', tokens: 3 }));
      expect(resent.duplicate).toBe(false);
      expect(resent.turn.seq).toBeGreaterThan(old.turn.seq);
    });

    it('keeps every id forever with a horizon of 0', async () => {
      const scope = randomScope();
      const buffer = new RedisTurnBuffer(redis, prefix, { idempotencyHorizonMs: 0, now: () => 5 });
      await buffer.append(scope, 's-1', makeTurnInput({ turnId: 'x-1' }));
      await buffer.remove(scope, ['x-1']);
      expect(await redis.exists(userKeys(prefix, scope).retired)).toBe(0);
      expect((await buffer.append(scope, 's-1', makeTurnInput({ turnId: 'x-1' }))).duplicate).toBe(true);
    });

    it('runs on a server with the persistence the buffer requires (AOF on)', async () => {
      const persistence = await redisPersistence(redis);
      expect(persistence.appendonly).toBe('yes');
      expect(persistence.durable).toBe(true);
      expect(['everysec', 'always']).toContain(persistence.appendfsync);
    });
  });

  describe('RedisContextCache (adapter-only)', () => {
    it('stores one msgpack value per user with a TTL, read back by one GET', async () => {
      const scope = randomScope();
      const cache = new RedisContextCache(redis, prefix, { ttlMs: 60_000 });
      const context = makeSessionContext();
      await cache.set(scope, packContext(context));
      const key = userKeys(prefix, scope).context;
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
      const raw = await redis.getBuffer(key);
      const marker = raw![0]!;
      expect(marker === 0xde || (marker & 0xf0) === 0x80).toBe(true); // a msgpack map, not JSON
      expect(decodeContext(unpackContext((await new RedisContextCache(connect(), prefix).get(scope))!)!)).toEqual(context);
      // An entry of another layout (an older release) is a miss: derived data, rebuilt by the next start.
      await redis.set(key, Buffer.from([0x81, 0xa1, 0x76, 0x01]));
      expect(unpackContext((await cache.get(scope))!)).toBeNull();
    });
  });

  describe('RedisUserLock (adapter-only)', () => {
    it('fences an expired holder: not held, cannot release the successor, smaller token', async () => {
      const key = rid('fence/');
      const workerA = new RedisUserLock(connect(), prefix);
      const workerB = new RedisUserLock(connect(), prefix);
      const a = (await workerA.acquire(key, 150))!;
      expect(await a.isHeld()).toBe(true);
      let b = await workerB.acquire(key, 30_000);
      expect(b).toBeNull();
      await waitFor(async () => (b = await workerB.acquire(key, 30_000)) !== null, 5_000, 'takeover');
      const successor = b!;
      expect(await a.isHeld()).toBe(false);
      expect(successor.token).toBeGreaterThan(a.token);
      await a.release();
      expect(await successor.isHeld()).toBe(true);
      expect(await workerA.acquire(key, 30_000)).toBeNull();
      await successor.release();
      const c = (await workerA.acquire(key, 30_000))!;
      expect(c.token).toBeGreaterThan(successor.token);
      await c.release();
    });
  });
});
