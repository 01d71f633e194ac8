import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { prng } from '../../bench/load/turn-text.ts';
import { openSqlite, SqliteAcuIndex, type Database } from '../../src/adapters/sqlite/index.ts';
import type { Acu, Scope } from '../../src/core/types.ts';
import { removeDir } from '../support/tmp.ts';

// Two connections to one file, as the gateway thread and the extraction thread have:
// the reader's cached binary codes must follow the writer's upserts and forgets.
const scope: Scope = { tenantId: 't', agentId: 'a', userId: 'u' };
let dir: string;
let dbs: Database[];

function vec(...xs: number[]): Float32Array {
  const v = new Float32Array(8);
  xs.forEach((x, i) => (v[i] = x));
  return v;
}
function unit(v: Float32Array): Float32Array {
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}
function dot(a: Float32Array, b: Float32Array): number {
  return a.reduce((s, x, i) => s + x * b[i]!, 0);
}
function acu(id: string, v: Float32Array): Acu {
  return { id, text: `fact ${id}`, embedding: v, turnRefs: [`turn-${id}`], sessionId: 's', validAt: '2026-01-01T00:00:00.000Z', createdAt: '2026-01-01T00:00:00.000Z', contentHash: id };
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mg-acu-cache-'));
  dbs = [openSqlite(join(dir, 'm.db')), openSqlite(join(dir, 'm.db'))];
});
afterEach(() => {
  for (const db of dbs) db.close();
  removeDir(dir);
});

describe('SqliteAcuIndex vector cache across connections', () => {
  it('patches in rows another connection wrote, and drops rows it forgot', async () => {
    const reader = new SqliteAcuIndex(dbs[0]!);
    const writer = new SqliteAcuIndex(dbs[1]!);
    await writer.upsert(scope, [acu('a', vec(1)), acu('b', vec(0, 1))]);
    expect((await reader.search(scope, vec(1), 1))[0]!.acu.id).toBe('a'); // cached now

    await writer.upsert(scope, [acu('c', vec(0, 0, 1))]);
    const afterWrite = await reader.search(scope, vec(0, 0, 1), 3);
    expect(afterWrite[0]!.acu.id).toBe('c');
    expect(afterWrite.map((h) => h.acu.id).sort()).toEqual(['a', 'b', 'c']);

    await writer.forget(scope);
    await writer.upsert(scope, [acu('d', vec(0, 0, 0, 1))]);
    const afterForget = await reader.search(scope, vec(1), 5);
    expect(afterForget.map((h) => h.acu.id)).toEqual(['d']);
  });

  it('sees a re-upserted vector of an existing id', async () => {
    const reader = new SqliteAcuIndex(dbs[0]!);
    const writer = new SqliteAcuIndex(dbs[1]!);
    await writer.upsert(scope, [acu('a', vec(1)), acu('b', vec(0, 1))]);
    await reader.search(scope, vec(1), 1);
    await writer.upsert(scope, [acu('a', vec(0, 0, 1))]);
    const hits = await reader.search(scope, vec(0, 0, 1), 2);
    expect(hits[0]!.acu.id).toBe('a');
    expect(hits[0]!.score).toBeCloseTo(1, 5);
    expect(hits).toHaveLength(2);
  });
});

describe('SqliteAcuIndex in-memory codes across connections, past the candidate floor', () => {
  // 2,000 rows: the scan hands 128 of them to the rescore, so a row missing from the reader's
  // codes is not rescued by the rescore reading every row.
  const DIM = 64;
  const random = prng(17);
  const vector = () => Float32Array.from({ length: DIM }, () => random() * 2 - 1);
  const corpus = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => acu(`${prefix}${i}`, vector()));
  const ids = (hits: Array<{ acu: Acu }>) => hits.map((h) => h.acu.id);

  it('finds rows the other connection appended after the codes were cached, with exact scores', async () => {
    const reader = new SqliteAcuIndex(dbs[0]!, { dimensions: DIM });
    const writer = new SqliteAcuIndex(dbs[1]!, { dimensions: DIM });
    await writer.upsert(scope, corpus('old-', 2000));
    await reader.search(scope, vector(), 5);
    expect(reader.cacheStats().users).toBe(1);
    const fresh = corpus('new-', 300);
    await writer.upsert(scope, fresh);
    for (const probe of [fresh[0]!, fresh[150]!, fresh[299]!]) {
      const [hit] = await reader.search(scope, probe.embedding, 1);
      expect([hit?.acu.id, hit?.score]).toEqual([probe.id, expect.closeTo(1, 5)]);
    }
    expect(await reader.count(scope)).toBe(2300);
  });

  it('reloads when the other connection rewrote a cached row’s vector in place', async () => {
    const reader = new SqliteAcuIndex(dbs[0]!, { dimensions: DIM });
    const writer = new SqliteAcuIndex(dbs[1]!, { dimensions: DIM });
    const rows = corpus('r-', 2000);
    await writer.upsert(scope, rows);
    await reader.search(scope, rows[5]!.embedding, 1);
    const moved = vector();
    await writer.upsert(scope, [acu('r-5', moved)]);
    const [hit] = await reader.search(scope, moved, 1);
    expect([hit?.acu.id, hit?.score]).toEqual(['r-5', expect.closeTo(1, 5)]);
    expect(ids(await reader.search(scope, rows[5]!.embedding, 3))).not.toContain('r-6'); // sanity: a real ranking
  });

  it('sees a forget and a rewrite of as many rows (same newest rid) by the other connection', async () => {
    const reader = new SqliteAcuIndex(dbs[0]!, { dimensions: DIM });
    const writer = new SqliteAcuIndex(dbs[1]!, { dimensions: DIM });
    await writer.upsert(scope, corpus('before-', 2000));
    await reader.search(scope, vector(), 1);
    // No search in between: the reader meets the new rows, which reuse the forgotten rids, at once.
    await writer.forget(scope);
    const after = corpus('after-', 2000);
    await writer.upsert(scope, after);
    expect(dbs[0]!.prepare<[], { n: number }>('SELECT MAX(rid) AS n FROM acu_items').get()!.n).toBe(2000);
    const [hit] = await reader.search(scope, after[777]!.embedding, 1);
    expect(hit?.acu.id).toBe('after-777');
    expect(ids(await reader.search(scope, vector(), 20)).every((id) => id.startsWith('after-'))).toBe(true);
    await writer.forget(scope);
    expect(await reader.search(scope, vector(), 1)).toEqual([]);
  });

  it('sees rows a writer that keeps no stamp added (the newest rid still tells)', async () => {
    const reader = new SqliteAcuIndex(dbs[0]!, { dimensions: DIM });
    const writer = new SqliteAcuIndex(dbs[1]!, { dimensions: DIM });
    await writer.upsert(scope, corpus('a-', 2000));
    dbs[1]!.exec('DELETE FROM acu_scopes');
    await reader.search(scope, vector(), 1);
    const late = corpus('b-', 10);
    await writer.upsert(scope, late);
    dbs[1]!.exec('DELETE FROM acu_scopes');
    expect((await reader.search(scope, late[3]!.embedding, 1))[0]?.acu.id).toBe('b-3');
  });

  it('answers with the cache, without it, and for a user too big for its budget (sqlite-vec KNN): each stored row first, exact scores', async () => {
    const cached = new SqliteAcuIndex(dbs[0]!, { dimensions: DIM });
    const uncached = new SqliteAcuIndex(dbs[0]!, { dimensions: DIM, vectorCacheMiB: 0 });
    const tiny = new SqliteAcuIndex(dbs[1]!, { dimensions: DIM, vectorCacheMiB: 0.01 });
    const rows = corpus('c-', 2000);
    await cached.upsert(scope, rows);
    const probes = [3, 500, 1999].map((i) => rows[i]!);
    const byId = new Map(rows.map((r) => [r.id, unit(r.embedding)]));
    for (const index of [cached, uncached, tiny]) {
      const answers = await index.nearestMany(
        scope,
        probes.map((p) => p.embedding),
        5,
      );
      answers.forEach((hits, i) => {
        expect(hits.map((h) => h.acu.id)[0]).toBe(probes[i]!.id);
        for (const h of hits) expect(h.score).toBeCloseTo(dot(byId.get(h.acu.id)!, unit(probes[i]!.embedding)), 5);
      });
    }
    expect(await tiny.nearestMany(scope, [rows[7]!.embedding], 5)).toEqual(await uncached.nearestMany(scope, [rows[7]!.embedding], 5));
    expect(cached.cacheStats()).toEqual({ users: 1, bytes: expect.any(Number) });
    expect([uncached.cacheStats().users, tiny.cacheStats().users]).toEqual([0, 0]);
  });

  it('evicts the least recently searched user past the budget', async () => {
    // 2,000 codes of 64 bits with their rids: 32 KB a user; a budget of 0.07 MiB holds two.
    const index = new SqliteAcuIndex(dbs[0]!, { dimensions: DIM, vectorCacheMiB: 0.07 });
    const users = ['u1', 'u2', 'u3'].map((userId) => ({ ...scope, userId }));
    for (const u of users) await index.upsert(u, corpus(`${u.userId}-`, 2000));
    for (const u of users) await index.search(u, vector(), 1);
    expect(index.cacheStats().users).toBe(2);
    const probe = corpus('probe-', 1)[0]!;
    await index.upsert(users[0]!, [{ ...probe, id: 'u1-probe' }]);
    expect((await index.search(users[0]!, probe.embedding, 1))[0]?.acu.id).toBe('u1-probe');
  });
});
