import type { AppendOutcome } from '../../src/ports/turn-buffer.ts';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { MemgateError } from '../../src/core/errors.ts';
import { checkpointerOf } from '../../src/adapters/sqlite/database.ts';
import { openSqlite, SqliteAcuIndex, SqliteColdArchive, SqliteContextCache, SqliteDocumentStore, SqliteTurnBuffer, type Database } from '../../src/adapters/sqlite/index.ts';
import { acuIndexContract } from '../contract/acu-index.contract.ts';
import { coldArchiveContract } from '../contract/cold-archive.contract.ts';
import { contextCacheContract } from '../contract/context-cache.contract.ts';
import { documentStoreContract } from '../contract/document-store.contract.ts';
import { turnBufferContract } from '../contract/turn-buffer.contract.ts';
import { buildFtsMatch, ftsScopeToken, searchTerms } from '../../src/adapters/sqlite/fts-query.ts';
import { topKDot } from '../../src/adapters/sqlite/vector-math.ts';
import { PackedVectors } from '../../src/adapters/sqlite/packed-vectors.ts';
import { VectorCache } from '../../src/adapters/sqlite/vector-cache.ts';
import { makeAcu, makeHotDoc, makeTurn, makeTurnInput, randomScope, sibling, unitVector } from '../support/fixtures.ts';
// Deterministic PRNG (mulberry32) so a failure reproduces; the bench's generators use the same one.
import { prng } from '../../bench/load/turn-text.ts';
import { removeDir } from '../support/tmp.ts';

const tmp = mkdtempSync(join(tmpdir(), 'memgate-sqlite-'));
const fileDb = openSqlite(join(tmp, 'nested', 'dir', 'contract.db'));
const owned = new WeakMap<object, Database>();
afterAll(async () => {
  fileDb.close();
  await checkpointerOf(fileDb)?.exited;
  removeDir(tmp);
});

/** A factory giving each test a private `:memory:` database, closed by the suite's cleanup. */
function inMemory<T extends object>(build: (db: Database) => T): () => Promise<T> {
  return async () => {
    const db = openSqlite(':memory:');
    const adapter = build(db);
    owned.set(adapter, db);
    return adapter;
  };
}
const closeDb = { cleanup: async (adapter: object) => void owned.get(adapter)?.close() };

turnBufferContract(
  'sqlite :memory:',
  inMemory((db) => new SqliteTurnBuffer(db)),
  closeDb,
);
turnBufferContract('sqlite file', async () => new SqliteTurnBuffer(fileDb));
contextCacheContract(
  'sqlite :memory:',
  inMemory((db) => new SqliteContextCache(db)),
  closeDb,
);
documentStoreContract(
  'sqlite :memory:',
  inMemory((db) => new SqliteDocumentStore(db)),
  closeDb,
);
coldArchiveContract(
  'sqlite :memory:',
  inMemory((db) => new SqliteColdArchive(db)),
  closeDb,
);
acuIndexContract(
  'sqlite :memory:',
  inMemory((db) => new SqliteAcuIndex(db)),
  closeDb,
);
acuIndexContract('sqlite file', async () => new SqliteAcuIndex(fileDb));
acuIndexContract('sqlite file, dimensions set by the embedder', async () => new SqliteAcuIndex(fileDb, { dimensions: 384 }));

describe('openSqlite', () => {
  it('creates parent directories and runs in WAL with synchronous NORMAL', () => {
    const path = join(tmp, 'a', 'b', 'pragmas.db');
    const db = openSqlite(path);
    try {
      expect(existsSync(path)).toBe(true);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('synchronous', { simple: true })).toBe(1);
      expect(db.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
    } finally {
      db.close();
    }
  });

  it('reopens an existing file without re-creating or losing tables', () => {
    const path = join(tmp, 'twice.db');
    openSqlite(path).close();
    const db = openSqlite(path);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
    db.close();
    expect(tables).toEqual(expect.arrayContaining(['tb_turns', 'tb_ids', 'tb_users', 'tb_sessions', 'cc_contexts', 'ds_hot', 'ds_schemas', 'ca_turns', 'ca_fts', 'acu_items', 'acu_fts']));
  });
});

describe('SqliteTurnBuffer (adapter-only)', () => {
  it('a lone append is synchronous: it returns the outcome itself, not a Promise', () => {
    const db = openSqlite(':memory:');
    const out = new SqliteTurnBuffer(db).append(randomScope(), 's-1', makeTurnInput()) as AppendOutcome;
    db.close();
    expect(out).not.toBeInstanceOf(Promise);
    expect(typeof (out as { then?: unknown }).then).toBe('undefined');
    expect(out.turn.seq).toBe(1);
  });

  it('returns the full original turn for a duplicate even after removal', async () => {
    const db = openSqlite(':memory:');
    const buffer = new SqliteTurnBuffer(db);
    const scope = randomScope();
    const first = await buffer.append(scope, 's-1', makeTurnInput({ turnId: 'x', speaker: 'Asha', asrConfidence: 0.5, interrupted: false }));
    await buffer.remove(scope, ['x']);
    const again = await buffer.append(scope, 's-1', makeTurnInput({ turnId: 'x', text: 'different' }));
    db.close();
    expect(again).toEqual({ turn: first.turn, duplicate: true, pendingTokens: 0 });
  });

  it('keeps acked turns, counters, ids and sessions across a close and reopen of the file', async () => {
    const path = join(tmp, 'restart.db');
    const scope = randomScope();
    const inputs = [makeTurnInput({ tokens: 3 }), makeTurnInput({ tokens: 4, speaker: 'Rajiv' }), makeTurnInput({ tokens: 5 })];
    let db = openSqlite(path);
    let buffer = new SqliteTurnBuffer(db);
    for (const t of inputs) buffer.append(scope, 's-r', t);
    await buffer.remove(scope, [inputs[0]!.turnId]);
    await buffer.openSession({ sessionId: 's-r', scope, startedAt: 10, endedAt: null });
    const before = await buffer.list(scope);
    db.close();

    db = openSqlite(path);
    buffer = new SqliteTurnBuffer(db);
    try {
      expect(await buffer.list(scope)).toEqual(before);
      expect(await buffer.pendingTokens(scope)).toBe(9);
      expect((await buffer.append(scope, 's-r', { ...inputs[0]! })).duplicate).toBe(true);
      expect((await buffer.append(scope, 's-r', { ...inputs[2]! })).duplicate).toBe(true);
      expect((await buffer.append(scope, 's-r', makeTurnInput())).turn.seq).toBe(4);
      expect(await buffer.getSession(scope.tenantId, 's-r')).toEqual({ sessionId: 's-r', scope, startedAt: 10, endedAt: null, generation: 1 });
    } finally {
      db.close();
    }
  });

  it('keeps a turn acked by a process that is then SIGKILLed (no close, no checkpoint)', async () => {
    const path = join(tmp, 'killed.db');
    const script = join(tmp, 'append-then-die.ts');
    const adapters = fileURLToPath(new URL('../../src/adapters/sqlite/index.ts', import.meta.url));
    writeFileSync(
      script,
      `import { openSqlite, SqliteTurnBuffer } from ${JSON.stringify(adapters)};
       const buffer = new SqliteTurnBuffer(openSqlite(${JSON.stringify(path)}));
       const scope = { tenantId: 't-kill', agentId: 'a', userId: 'u' };
       for (let i = 1; i <= 3; i++) {
         const out = buffer.append(scope, 's', { turnId: 'k' + i, sessionId: 's', role: 'user', text: 'acked ' + i, ts: i, receivedAt: i, tokens: 2 });
         process.stdout.write('ack ' + out.turn.seq + '\\n');
       }
       process.kill(process.pid, 'SIGKILL');`,
    );
    const child = await promisify(execFile)(process.execPath, ['--import', 'tsx', script]).catch((err: { stdout?: string; signal?: string }) => err);
    expect(child.stdout).toBe('ack 1\nack 2\nack 3\n');
    const db = openSqlite(path);
    try {
      const buffer = new SqliteTurnBuffer(db);
      const scope = { tenantId: 't-kill', agentId: 'a', userId: 'u' };
      expect((await buffer.list(scope)).map((t) => t.text)).toEqual(['acked 1', 'acked 2', 'acked 3']);
      expect(await buffer.pendingTokens(scope)).toBe(6);
    } finally {
      db.close();
    }
  }, 60_000);
});

describe('SQLite stores share one file', () => {
  it('documents, cold turns and ACUs persist across a reopen', async () => {
    const path = join(tmp, 'all.db');
    const scope = randomScope();
    let db = openSqlite(path);
    await new SqliteDocumentStore(db).commitHot(makeHotDoc(scope, 1), 0);
    await new SqliteColdArchive(db).archive(scope, [makeTurn(1, { text: 'the budget is eighty lakhs' })]);
    await new SqliteAcuIndex(db).upsert(scope, [makeAcu(scope, 'Budget approved', unitVector({ 2: 1 }))]);
    db.close();
    db = openSqlite(path);
    try {
      expect((await new SqliteDocumentStore(db).getHot(scope))?.version).toBe(1);
      expect(await new SqliteColdArchive(db).search(scope, 'budget', 1)).toHaveLength(1);
      const [hit] = await new SqliteAcuIndex(db).search(scope, unitVector({ 2: 1 }), 1);
      expect(hit?.score).toBeCloseTo(1, 5);
    } finally {
      db.close();
    }
  });
});

describe('SqliteAcuIndex (adapter-only)', () => {
  it("follows the embedder's dimensions: rows of an earlier embedder are skipped, other sizes refused", async () => {
    const db = openSqlite(':memory:');
    try {
      const scope = randomScope();
      // Written by a 384-d embedder, then the deployment switches to a 512-d one.
      await new SqliteAcuIndex(db).upsert(scope, [makeAcu(scope, 'old fact', unitVector({ 1: 1 }))]);
      const index = new SqliteAcuIndex(db, { dimensions: 512 });
      expect(await index.search(scope, unitVector({ 1: 1 }, 512), 5)).toEqual([]);
      await index.upsert(scope, [makeAcu(scope, 'new fact', unitVector({ 1: 1 }, 512))]);
      expect((await index.search(scope, unitVector({ 1: 1 }, 512), 5)).map((h) => h.acu.text)).toEqual(['new fact']);
      expect((await index.keywordSearch(scope, 'fact', 5)).map((h) => h.acu.text).sort()).toEqual(['new fact', 'old fact']);
      await expect(index.upsert(scope, [makeAcu(scope, 'wrong size', unitVector({ 1: 1 }))])).rejects.toThrow(/384-d embedding, the index holds 512-d/);
      await expect(index.search(scope, unitVector({ 1: 1 }), 5)).rejects.toThrow(/384 dimensions, the index holds 512-d/);
    } finally {
      db.close();
    }
  });

  it('finds the same top-k as a brute-force reference over 10,000 random 384-d vectors', async () => {
    const db = openSqlite(':memory:');
    const index = new SqliteAcuIndex(db);
    const scope = randomScope();
    const random = prng(42);
    const dims = 384;
    const acus = Array.from({ length: 10_000 }, (_, i) => {
      const v = new Float32Array(dims);
      for (let j = 0; j < dims; j++) v[j] = random() * 2 - 1;
      return makeAcu(scope, `fact ${i}`, v);
    });
    await index.upsert(scope, acus);
    await index.upsert(sibling(scope), [makeAcu(sibling(scope), 'noise', unitVector({ 0: 1 }))]);
    const normalised = acus.map((a) => normalise(a.embedding));
    try {
      for (let q = 0; q < 5; q++) {
        const query = new Float32Array(dims);
        for (let j = 0; j < dims; j++) query[j] = random() * 2 - 1;
        const qn = normalise(query);
        const reference = normalised
          .map((v, i) => ({ id: acus[i]!.id, score: v.reduce((s, x, j) => s + x * qn[j]!, 0) }))
          .sort((a, b) => b.score - a.score)
          .slice(0, 10);
        const hits = await index.search(scope, query, 10);
        expect(hits.map((h) => h.acu.id)).toEqual(reference.map((r) => r.id));
        hits.forEach((h, i) => expect(h.score).toBeCloseTo(reference[i]!.score, 4));
      }
    } finally {
      db.close();
    }
  });

  it('normalises embeddings on upsert, so an unnormalised vector still scores as cosine', async () => {
    const db = openSqlite(':memory:');
    const index = new SqliteAcuIndex(db);
    const scope = randomScope();
    await index.upsert(scope, [makeAcu(scope, 'scaled', Float32Array.from([3, 4, 0, 0]))]);
    const [hit] = await index.search(scope, Float32Array.from([30, 40, 0, 0]), 1);
    db.close();
    expect(hit?.score).toBeCloseTo(1, 5);
    expect(Array.from(hit!.acu.embedding)).toEqual([expect.closeTo(0.6, 5), expect.closeTo(0.8, 5), 0, 0]);
  });

  it('reflects an in-place change of a cached vector and many appends after a search', async () => {
    const db = openSqlite(':memory:');
    const index = new SqliteAcuIndex(db);
    const scope = randomScope();
    const moving = makeAcu(scope, 'moving', unitVector({ 1: 1 }));
    await index.upsert(scope, [moving, makeAcu(scope, 'fixed', unitVector({ 0: 0.9, 1: 0.1 }))]);
    expect((await index.search(scope, unitVector({ 0: 1 }), 1))[0]?.acu.text).toBe('fixed');
    await index.upsert(scope, [{ ...moving, embedding: unitVector({ 0: 1 }) }]);
    expect((await index.search(scope, unitVector({ 0: 1 }), 1))[0]?.acu.text).toBe('moving');
    await index.upsert(
      scope,
      Array.from({ length: 50 }, (_, i) => makeAcu(scope, `extra ${i}`, unitVector({ 2: 1, 3: i }))),
    );
    const hits = await index.search(scope, unitVector({ 3: 1 }), 1);
    db.close();
    expect(hits[0]?.acu.text).toBe('extra 49');
  });

  it('sees writes made through another connection to the same file', async () => {
    const path = join(tmp, 'two-connections.db');
    const [db1, db2] = [openSqlite(path), openSqlite(path)];
    const [reader, writer] = [new SqliteAcuIndex(db1), new SqliteAcuIndex(db2)];
    const scope = randomScope();
    try {
      await writer.upsert(scope, [makeAcu(scope, 'first', unitVector({ 0: 0.5, 1: 0.5 }))]);
      expect((await reader.search(scope, unitVector({ 0: 1 }), 1))[0]?.acu.text).toBe('first');
      await writer.upsert(scope, [makeAcu(scope, 'second', unitVector({ 0: 1 }))]);
      expect((await reader.search(scope, unitVector({ 0: 1 }), 1))[0]?.acu.text).toBe('second');
      await writer.forget(scope);
      expect(await reader.search(scope, unitVector({ 0: 1 }), 1)).toEqual([]);
      await writer.upsert(scope, [makeAcu(scope, 'third', unitVector({ 0: 1 }))]);
      expect((await reader.search(scope, unitVector({ 0: 1 }), 1))[0]?.acu.text).toBe('third');
    } finally {
      db1.close();
      db2.close();
    }
  });

  it('rejects a query of another dimension with a bad_request MemgateError', async () => {
    const db = openSqlite(':memory:');
    const index = new SqliteAcuIndex(db);
    const scope = randomScope();
    await index.upsert(scope, [makeAcu(scope, 'x', unitVector({ 0: 1 }, 8))]);
    const err = await index.search(scope, unitVector({ 0: 1 }, 4), 1).catch((e: unknown) => e);
    db.close();
    expect(err).toBeInstanceOf(MemgateError);
    expect((err as MemgateError).code).toBe('bad_request');
  });

  it('refuses to move an ACU id to another user, changing nothing', async () => {
    const db = openSqlite(':memory:');
    const index = new SqliteAcuIndex(db);
    const a = randomScope();
    const b = sibling(a);
    const acu = makeAcu(a, 'belongs to a', unitVector({ 0: 1 }));
    await index.upsert(a, [acu]);
    await expect(index.upsert(b, [acu])).rejects.toThrow(MemgateError);
    expect(await index.count(b)).toBe(0);
    expect((await index.search(a, unitVector({ 0: 1 }), 1))[0]?.acu.text).toBe('belongs to a');
    db.close();
  });
});

describe('FTS query building', () => {
  it('keeps words only, lower-cased, deduplicated, stopwords dropped', () => {
    expect(searchTerms('What is the BUDGET? The budget!!')).toEqual(['budget']);
    expect(searchTerms('"Whitefield" AND site* NEAR(visit)')).toEqual(['whitefield', 'site', 'near', 'visit']);
    expect(searchTerms('नमस्ते 😀 café')).toEqual(['नमस्ते', 'café']);
  });

  it('keeps stopwords when the query has nothing else', () => {
    expect(searchTerms('who are you')).toEqual(['who', 'are', 'you']);
  });

  it('has no expression for an empty or symbol-only query', () => {
    for (const q of ['', '  ', '*', '"', '😀', '()']) expect(buildFtsMatch(randomScope(), q)).toBeNull();
  });

  it('quotes every term, ORs them and pins the user token', () => {
    const scope = randomScope();
    expect(buildFtsMatch(scope, 'site NEAR visit')).toBe(`sk : "${ftsScopeToken(scope)}" AND text : ("site" OR "near" OR "visit")`);
  });
});

describe('vector search internals', () => {
  it('topKDot returns the best rows first and copes with k larger than the row count', () => {
    const matrix = Float32Array.from([1, 0, 0, 1, 0.6, 0.8, -1, 0]);
    expect(topKDot(matrix, 2, 4, Float32Array.from([1, 0]), 10).map((r) => r.index)).toEqual([0, 2, 1, 3]);
    expect(topKDot(matrix, 2, 4, Float32Array.from([0, 1]), 2).map((r) => r.index)).toEqual([1, 2]);
    expect(topKDot(matrix, 2, 0, Float32Array.from([0, 1]), 2)).toEqual([]);
  });

  it('PackedVectors skips rows of another dimension, overwrites by rid and grows past its capacity', () => {
    const blob = (v: number[]) => new Uint8Array(Float32Array.from(v).buffer);
    const packed = PackedVectors.fromRows(
      [
        { rid: 7, embedding: blob([1, 0]) },
        { rid: 8, embedding: blob([1, 0, 0]) },
        { rid: 9, embedding: blob([0, 1]) },
      ],
      3,
    );
    expect([packed.count, packed.dim, packed.version]).toEqual([2, 2, 3]);
    expect([packed.ridAt(0), packed.ridAt(1)]).toEqual([7, 9]);
    packed.set(9, Float32Array.from([0.6, 0.8]));
    for (let rid = 100; rid < 110; rid++) packed.set(rid, Float32Array.from([rid, 0]));
    expect(packed.count).toBe(12);
    expect(Array.from(packed.matrix.subarray(0, 4))).toEqual([1, 0, expect.closeTo(0.6, 6), expect.closeTo(0.8, 6)]);
    expect([packed.ridAt(11), packed.matrix[22]]).toEqual([109, 109]);
  });

  it('VectorCache evicts the least recently used entry past its byte budget', () => {
    const entry = () => new PackedVectors(2, 1, 4);
    const cache = new VectorCache(entry().byteLength * 2);
    const [a, b, c] = [entry(), entry(), entry()];
    cache.put('a', a);
    cache.put('b', b);
    expect(cache.get('a')).toBe(a);
    cache.put('c', c);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(a);
    expect(cache.get('c')).toBe(c);
    cache.invalidate('a');
    expect(cache.get('a')).toBeUndefined();
  });
});

function normalise(v: Float32Array): Float64Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  return Float64Array.from(v, (x) => x / n);
}
