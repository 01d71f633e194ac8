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
import { openSqlite, SCHEMA_VERSION, SqliteAcuIndex, SqliteColdArchive, SqliteContextCache, SqliteDocumentStore, SqliteTurnBuffer, type Database } from '../../src/adapters/sqlite/index.ts';
import { acuIndexContract } from '../contract/acu-index.contract.ts';
import { coldArchiveContract } from '../contract/cold-archive.contract.ts';
import { contextCacheContract } from '../contract/context-cache.contract.ts';
import { documentStoreContract } from '../contract/document-store.contract.ts';
import { turnBufferContract } from '../contract/turn-buffer.contract.ts';
import { buildFtsMatch, ftsScopeToken, searchTerms } from '../../src/adapters/sqlite/fts-query.ts';
import { backfillVectorTables, binaryCode, loadVectorExtension } from '../../src/adapters/sqlite/vector-tables.ts';
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

  // The binary KNN pre-selects candidates and the rescore is exact, so every hit carries its exact
  // cosine and only a near-tie can be missed. This set (40 topics, as much noise as signal) is
  // harder than sentence embeddings: 0.965 with the defaults, where fused embeddings of 10k facts
  // keep ≥ 0.99 (the bench's vectors suite measures that). The floor catches a broken engine
  // (codes of the query and the rows packed differently score ~0.1), not a tuning change.
  for (const [shape, topics, floor] of [['topic-clustered', 40, 0.95]] as const) {
    it(`keeps the brute-force top-10 over 10,000 ${shape} 384-d vectors (recall ≥ ${floor}), with exact cosine scores`, async () => {
      const db = openSqlite(':memory:');
      const index = new SqliteAcuIndex(db);
      const scope = randomScope();
      const random = prng(42);
      const dims = 384;
      const centres = Array.from({ length: topics }, () => Float32Array.from({ length: dims }, () => random() * 2 - 1));
      const draw = () => {
        const centre = centres[Math.floor(random() * topics)];
        return Float32Array.from({ length: dims }, (_, j) => (centre ? centre[j]! * 0.8 : 0) + random() * 2 - 1);
      };
      const acus = Array.from({ length: 10_000 }, (_, i) => makeAcu(scope, `fact ${i}`, draw()));
      await index.upsert(scope, acus);
      await index.upsert(sibling(scope), [makeAcu(sibling(scope), 'noise', unitVector({ 0: 1 }))]);
      const normalised = acus.map((a) => normalise(a.embedding));
      let found = 0;
      const queries = 20;
      try {
        for (let q = 0; q < queries; q++) {
          const qn = normalise(draw());
          const exact = new Map(normalised.map((v, i) => [acus[i]!.id, v.reduce((s, x, j) => s + x * qn[j]!, 0)]));
          const reference = new Set(
            [...exact]
              .sort((a, b) => b[1] - a[1])
              .slice(0, 10)
              .map(([id]) => id),
          );
          const hits = await index.search(scope, Float32Array.from(qn), 10);
          expect(hits).toHaveLength(10);
          for (const h of hits) expect(h.score).toBeCloseTo(exact.get(h.acu.id)!, 4);
          for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
          found += hits.filter((h) => reference.has(h.acu.id)).length;
        }
      } finally {
        db.close();
      }
      expect(found / (queries * 10)).toBeGreaterThanOrEqual(floor);
    });
  }

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

  it('reflects an in-place change of a stored vector and many appends after a search', async () => {
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

describe('vector engine (sqlite-vec)', () => {
  it('packs sign bits 8 per byte, padding a size that is not a multiple of 8', () => {
    expect([...binaryCode(Float32Array.from([1, -1, 0, 0.5, -0.1, 2, 0, 0, -3, 4]))]).toEqual([0b00101001, 0b00000010]);
  });

  it('indexes and searches embeddings of every size an embedder may have (896, 512, 256, 128 and an odd 100)', async () => {
    const db = openSqlite(':memory:');
    try {
      const random = prng(7);
      for (const dims of [896, 512, 256, 128, 100]) {
        const index = new SqliteAcuIndex(db, { dimensions: dims });
        const scope = randomScope();
        const acus = Array.from({ length: 300 }, (_, i) =>
          makeAcu(
            scope,
            `fact ${i} at ${dims}`,
            Float32Array.from({ length: dims }, () => random() * 2 - 1),
          ),
        );
        await index.upsert(scope, acus);
        const [hit] = await index.search(scope, acus[123]!.embedding, 1);
        expect([hit?.acu.text, hit?.score]).toEqual([`fact 123 at ${dims}`, expect.closeTo(1, 5)]);
      }
    } finally {
      db.close();
    }
  });

  it('answers nearestMany exactly as one search per vector', async () => {
    const db = openSqlite(':memory:');
    try {
      const index = new SqliteAcuIndex(db);
      const scope = randomScope();
      const random = prng(11);
      const vector = () => Float32Array.from({ length: 64 }, () => random() * 2 - 1);
      await index.upsert(
        scope,
        Array.from({ length: 500 }, (_, i) => makeAcu(scope, `fact ${i}`, vector())),
      );
      const queries = Array.from({ length: 6 }, vector);
      const many = await index.nearestMany(scope, queries, 3);
      expect(many).toEqual(await Promise.all(queries.map((q) => index.search(scope, q, 3))));
      expect(await index.nearestMany(scope, [], 3)).toEqual([]);
      expect(await index.nearestMany(randomScope(), queries.slice(0, 2), 3)).toEqual([[], []]);
    } finally {
      db.close();
    }
  });

  it('answers a k past sqlite-vec’s KNN limit (4096 candidates) with every row of the user, exactly ranked', async () => {
    const db = openSqlite(':memory:');
    try {
      const index = new SqliteAcuIndex(db);
      const scope = randomScope();
      const random = prng(3);
      const acus = Array.from({ length: 700 }, (_, i) =>
        makeAcu(
          scope,
          `fact ${i}`,
          Float32Array.from({ length: 32 }, () => random() * 2 - 1),
        ),
      );
      await index.upsert(scope, acus);
      await index.upsert(sibling(scope), [makeAcu(sibling(scope), 'noise', unitVector({ 0: 1 }, 32))]);
      const hits = await index.search(scope, acus[9]!.embedding, 1_000);
      expect(hits).toHaveLength(700);
      expect(hits[0]!.acu.text).toBe('fact 9');
      for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
    } finally {
      db.close();
    }
  });

  it('forget removes the user’s codes from the vector table and keeps the others’', async () => {
    const db = openSqlite(':memory:');
    try {
      const index = new SqliteAcuIndex(db);
      const [a, b] = [randomScope(), randomScope()];
      await index.upsert(a, [makeAcu(a, 'a1', unitVector({ 0: 1 })), makeAcu(a, 'a2', unitVector({ 1: 1 }))]);
      await index.upsert(b, [makeAcu(b, 'b1', unitVector({ 0: 1 }))]);
      const codes = () => db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM acu_vec_384_rowids').get()!.n;
      expect(codes()).toBe(3);
      await index.forget(a);
      expect(codes()).toBe(1);
      expect((await index.search(b, unitVector({ 0: 1 }), 5)).map((h) => h.acu.text)).toEqual(['b1']);
    } finally {
      db.close();
    }
  });

  it('a database written before the vector engine is backfilled at open, once, and searches as before', async () => {
    const path = join(tmp, 'pre-vector.db');
    const scope = randomScope();
    const random = prng(5);
    const acus = Array.from({ length: 2000 }, (_, i) =>
      makeAcu(
        scope,
        `old fact ${i}`,
        Float32Array.from({ length: 128 }, () => random() * 2 - 1),
      ),
    );
    const first = openSqlite(path);
    const before = await new SqliteAcuIndex(first).search(scope, acus[0]!.embedding, 1);
    expect(before).toEqual([]);
    await new SqliteAcuIndex(first).upsert(scope, acus);
    // What a version-2 file looks like: the rows without their codes.
    first.exec('DROP TABLE acu_vec_128');
    first.close();
    await checkpointerOf(first)?.exited;
    const reopened = openSqlite(path);
    try {
      expect(reopened.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM acu_vec_128_rowids').get()!.n).toBe(2000);
      expect(backfillVectorTables(reopened)).toBe(0);
      const index = new SqliteAcuIndex(reopened);
      const [hit] = await index.search(scope, acus[1234]!.embedding, 1);
      expect(hit?.acu.text).toBe('old fact 1234');
    } finally {
      reopened.close();
      await checkpointerOf(reopened)?.exited;
    }
  });

  it('a file of schema 3 (no write stamps) gets a stamp for every user at open, so cached codes can be checked', async () => {
    const path = join(tmp, 'schema-3.db');
    const [a, b] = [randomScope(), randomScope()];
    const first = openSqlite(path);
    const index = new SqliteAcuIndex(first);
    await index.upsert(a, [makeAcu(a, 'a1', unitVector({ 0: 1 }))]);
    await index.upsert(b, [makeAcu(b, 'b1', unitVector({ 1: 1 }))]);
    // What schema 3 left: no stamps, or stale ones of schema 2.
    first.exec(
      'DELETE FROM acu_scopes; INSERT INTO acu_scopes (tenant_id, agent_id, user_id, version, since) SELECT tenant_id, agent_id, user_id, 1, 1 FROM acu_items LIMIT 1; PRAGMA user_version = 3',
    );
    first.close();
    await checkpointerOf(first)?.exited;
    const reopened = openSqlite(path);
    try {
      const stamps = reopened.prepare<[], { version: number; since: number }>('SELECT version, since FROM acu_scopes').all();
      expect(stamps).toHaveLength(2);
      expect(stamps.every((s) => s.version > 1 && s.since === s.version)).toBe(true);
      expect(reopened.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    } finally {
      reopened.close();
      await checkpointerOf(reopened)?.exited;
    }
  });

  it('loads a user’s codes by a range read of acu_codes (vec0 answers a partition-key read by scanning every user’s codes)', () => {
    const db = openSqlite(':memory:');
    try {
      const plan = db.prepare('EXPLAIN QUERY PLAN SELECT rid, code FROM acu_codes WHERE tenant_id = ? AND agent_id = ? AND user_id = ? AND length(code) = ?').all('t', 'a', 'u', 2) as Array<{
        detail: string;
      }>;
      expect(plan.map((p) => p.detail).join(' | ')).toMatch(/SEARCH acu_codes USING PRIMARY KEY \(tenant_id=\? AND agent_id=\? AND user_id=\?\)/);
    } finally {
      db.close();
    }
  });

  it('a file of schema 5 (no acu_codes) gets every row’s code at open; searches and forget use them', async () => {
    const path = join(tmp, 'schema-5.db');
    const [a, b] = [randomScope(), randomScope()];
    const first = openSqlite(path);
    const index = new SqliteAcuIndex(first);
    await index.upsert(a, [makeAcu(a, 'a1', unitVector({ 0: 1 })), makeAcu(a, 'a2', unitVector({ 1: 1 }))]);
    await index.upsert(b, [makeAcu(b, 'b1', unitVector({ 2: 1 }))]);
    const written = first.prepare<[], { rid: number; code: Buffer }>('SELECT rid, code FROM acu_codes ORDER BY rid').all();
    expect(written.map((r) => r.code)).toEqual([unitVector({ 0: 1 }), unitVector({ 1: 1 }), unitVector({ 2: 1 })].map((v) => binaryCode(v)));
    first.exec('DELETE FROM acu_codes; PRAGMA user_version = 5');
    first.close();
    await checkpointerOf(first)?.exited;
    const reopened = openSqlite(path);
    try {
      expect(reopened.prepare<[], { rid: number; code: Buffer }>('SELECT rid, code FROM acu_codes ORDER BY rid').all()).toEqual(written);
      const again = new SqliteAcuIndex(reopened);
      expect((await again.search(a, unitVector({ 1: 1 }), 1)).map((h) => h.acu.text)).toEqual(['a2']);
      await again.forget(a);
      expect(reopened.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM acu_codes').get()!.n).toBe(1);
    } finally {
      reopened.close();
      await checkpointerOf(reopened)?.exited;
    }
  });

  it('refuses to start without the extension: a clear unavailable error, not a silent scan', () => {
    const err = (() => {
      try {
        loadVectorExtension({
          loadExtension: () => {
            throw new Error('cannot open shared object file');
          },
        } as unknown as Database);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(MemgateError);
    expect(err).toMatchObject({ code: 'unavailable', retryable: false, message: expect.stringMatching(/sqlite-vec.*cannot open shared object file/) });
  });
});

function normalise(v: Float32Array): Float64Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  return Float64Array.from(v, (x) => x / n);
}
