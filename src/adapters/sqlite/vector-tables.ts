import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { MemgateError } from '../../core/errors.ts';
import { ftsScopeToken } from './fts-query.ts';

// The driver's type, not database.ts's alias: database.ts runs migrate(), which imports this file.
type Database = BetterSqlite3.Database;

const loaded = new WeakSet<Database>();

/**
 * Load sqlite-vec into `db` (once per connection). It is a regular dependency, so a failure
 * is a broken install: fail loudly at open rather than fall back to a scan that would quietly
 * miss the latency targets at 100k ACUs.
 */
export function loadVectorExtension(db: Database): void {
  if (loaded.has(db)) return;
  try {
    // CommonJS entry: it finds the platform package (sqlite-vec-linux-x64, ...) next to itself.
    (createRequire(import.meta.url)('sqlite-vec') as { load(db: Database): void }).load(db);
  } catch (err) {
    throw new MemgateError(
      'unavailable',
      `cannot load the sqlite-vec extension (the embedded ACU vector index): ${err instanceof Error ? err.message : String(err)}; reinstall memgate with its optional platform package (sqlite-vec-${process.platform}-${process.arch})`,
      {
        cause: err,
        retryable: false,
      },
    );
  }
  loaded.add(db);
}

/** Name of the vec0 table holding the binary codes of `dim`-dimensional embeddings. */
export function vectorTable(dim: number): string {
  if (!Number.isInteger(dim) || dim <= 0) throw new MemgateError('bad_request', `an embedding must have a positive whole number of dimensions, got ${dim}`);
  return `acu_vec_${dim}`;
}

/** Dimensions that have a vector table in `db`. */
export function vectorDimensions(db: Database): number[] {
  const names = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'acu_vec_[0-9]*'").all();
  return names.flatMap(({ name }) => /^acu_vec_(\d+)$/.exec(name)?.[1] ?? []).map(Number);
}

/**
 * Create the vec0 table for `dim` if missing: one bit per dimension (the sign), rounded up to
 * whole bytes, partitioned by the user's token so a KNN reads only that user's chunks.
 * chunk_size 256: the default (1024) preallocates 4× the space per user, and sqlite-vec's
 * per-chunk top-k costs more with bigger chunks (measured: 100k codes, k=150, 34 ms at 256
 * against 43 ms at 2048).
 */
export function ensureVectorTable(db: Database, dim: number): string {
  const table = vectorTable(dim);
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${table} USING vec0 (sk TEXT PARTITION KEY, code BIT[${Math.ceil(dim / 8) * 8}], chunk_size = 256)`);
  return table;
}

/**
 * Sign bits of a vector, packed 8 per byte: the Hamming distance between two codes tracks the
 * angle between the vectors, which is what the KNN pre-selects on before the exact rescore.
 * The stored vectors are L2-normalised Float32 bytes.
 */
export function binaryCode(vector: Float32Array): Buffer {
  const code = Buffer.alloc(Math.ceil(vector.length / 8));
  for (let i = 0; i < vector.length; i++) if (vector[i]! > 0) code[i >> 3]! |= 1 << (i & 7);
  return code;
}

/** The Float32 view of stored embedding bytes (copied: SQLite's Buffer need not be 4-byte aligned). */
export function bytesToVector(bytes: Uint8Array): Float32Array {
  const v = new Float32Array(bytes.byteLength >> 2);
  new Uint8Array(v.buffer).set(bytes.subarray(0, v.byteLength));
  return v;
}

/**
 * Index every ACU row that has no code yet (a database written before the vector engine, or
 * by a process that died between the two writes, which cannot happen inside one transaction
 * but costs nothing to cover). Idempotent: a count comparison makes the usual open free.
 * Returns how many rows it indexed.
 */
export function backfillVectorTables(db: Database): number {
  const items = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM acu_items').get()!.n;
  // `<table>_rowids` is sqlite-vec's shadow table of the rows it holds (pinned 0.1.9): counting it is a plain index scan.
  const coded = vectorDimensions(db).reduce((sum, dim) => sum + db.prepare<[], { n: number }>(`SELECT COUNT(*) AS n FROM ${vectorTable(dim)}_rowids`).get()!.n, 0);
  if (items === coded) return 0;
  const sizes = db.prepare<[], { bytes: number }>('SELECT DISTINCT length(embedding) AS bytes FROM acu_items').all();
  let written = 0;
  for (const { bytes } of sizes) {
    if (bytes === 0 || bytes % 4 !== 0) continue;
    const table = ensureVectorTable(db, bytes / 4);
    const missing = db
      .prepare<[number], { rid: number }>(`SELECT rid FROM acu_items a WHERE length(a.embedding) = ? AND NOT EXISTS (SELECT 1 FROM ${table}_rowids r WHERE r.rowid = a.rid)`)
      .all(bytes);
    const read = db.prepare<[string], { rid: number; tenant_id: string; agent_id: string; user_id: string; embedding: Buffer }>(
      'SELECT rid, tenant_id, agent_id, user_id, embedding FROM acu_items WHERE rid IN (SELECT value FROM json_each(?))',
    );
    const insert = db.prepare<[bigint, string, Buffer]>(`INSERT INTO ${table} (rowid, sk, code) VALUES (?, ?, vec_bit(?))`);
    for (let i = 0; i < missing.length; i += 1000) {
      const page = JSON.stringify(missing.slice(i, i + 1000).map((m) => m.rid));
      for (const row of read.all(page)) {
        insert.run(BigInt(row.rid), ftsScopeToken({ tenantId: row.tenant_id, agentId: row.agent_id, userId: row.user_id }), binaryCode(bytesToVector(row.embedding)));
        written++;
      }
    }
  }
  return written;
}

/**
 * Give every ACU row its entry in acu_codes (a database written before schema 6). Idempotent:
 * a count comparison makes the usual open free. Returns how many rows it wrote.
 */
export function backfillAcuCodes(db: Database): number {
  const items = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM acu_items').get()!.n;
  const coded = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM acu_codes').get()!.n;
  if (items === coded) return 0;
  const missing = db.prepare<[], { rid: number }>('SELECT rid FROM acu_items a WHERE NOT EXISTS (SELECT 1 FROM acu_codes c WHERE c.rid = a.rid)').all();
  const read = db.prepare<[string], { rid: number; tenant_id: string; agent_id: string; user_id: string; embedding: Buffer }>(
    'SELECT rid, tenant_id, agent_id, user_id, embedding FROM acu_items WHERE rid IN (SELECT value FROM json_each(?))',
  );
  const insert = db.prepare<[string, string, string, number, Buffer]>('INSERT OR REPLACE INTO acu_codes (tenant_id, agent_id, user_id, rid, code) VALUES (?, ?, ?, ?, ?)');
  let written = 0;
  for (let i = 0; i < missing.length; i += 1000) {
    for (const row of read.all(JSON.stringify(missing.slice(i, i + 1000).map((m) => m.rid)))) {
      insert.run(row.tenant_id, row.agent_id, row.user_id, row.rid, binaryCode(bytesToVector(row.embedding)));
      written++;
    }
  }
  return written;
}
