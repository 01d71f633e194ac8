import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqlite, SqliteAcuIndex, type Database } from '../../src/adapters/sqlite/index.ts';
import type { Acu, Scope } from '../../src/core/types.ts';
import { removeDir } from '../support/tmp.ts';

// Two connections to one file, as the gateway thread and the extraction thread have:
// the reader's cached vectors must follow the writer's upserts and forgets.
const scope: Scope = { tenantId: 't', agentId: 'a', userId: 'u' };
let dir: string;
let dbs: Database[];

function vec(...xs: number[]): Float32Array {
  const v = new Float32Array(8);
  xs.forEach((x, i) => (v[i] = x));
  return v;
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
