import type BetterSqlite3 from 'better-sqlite3';
import { MemgateError } from '../../core/errors.ts';
import type { Acu, Scope } from '../../core/types.ts';
import type { AcuHit, AcuIndex, AcuIndexCapabilities } from '../../ports/acu-index.ts';
import { embeddingBlob, rowToAcu } from './acu-row.ts';
import { prepareAcuStatements } from './acu-statements.ts';
import type { Database } from './database.ts';
import { buildFtsMatch, ftsScopeToken } from './fts-query.ts';
import { migrate } from './migrations.ts';
import { l2Normalize } from './vector-math.ts';
import { binaryCode, ensureVectorTable, vectorTable } from './vector-tables.ts';

/** Tuning of SqliteAcuIndex. */
export interface SqliteAcuIndexOptions {
  /**
   * The embedder's vector size. Set, the index searches only rows of this size (rows an
   * earlier embedder wrote stay findable by keyword until re-embedded) and refuses to store
   * or search with vectors of another size. Unset, a user's first stored row sets it.
   */
  dimensions?: number;
  /**
   * Candidates the binary KNN hands to the exact rescore, per hit asked for (default 8), and
   * never fewer than `minCandidates` (default 128). sqlite-vec's KNN costs grow with the
   * candidates asked for (10k codes: ~3 ms for 96, ~8 ms for 240 on a loaded 2-core machine);
   * on fused 896-d embeddings of 10k facts, 8 per hit kept 0.99 of the exact top-10 and 16 kept
   * 0.998 (BENCHMARKS.md, vector engine).
   */
  oversample?: number;
  minCandidates?: number;
}

/** The largest k sqlite-vec 0.1.9 accepts in a KNN query. */
const KNN_LIMIT = 4096;

interface VectorStatements {
  knn: BetterSqlite3.Statement<[Buffer, number, string], { rowid: number }>;
  insert: BetterSqlite3.Statement<[bigint, string, Buffer]>;
  remove: BetterSqlite3.Statement<[bigint]>;
}

/**
 * Tier 2, embedded: ACU rows in SQLite, an FTS5 table for the BM25 leg, and a sqlite-vec
 * vec0 table per embedding size holding each row's sign bits, partitioned by user. A vector
 * search asks vec0 for the nearest codes by Hamming distance (an oversampled candidate set),
 * then rescores those rows exactly by cosine from their stored Float32 vectors (stored
 * L2-normalised, so cosine = dot). Every read goes to the database, so writes through another
 * connection (the extraction thread) are seen at once, and nothing is rebuilt in memory.
 */
export class SqliteAcuIndex implements AcuIndex {
  readonly capabilities: AcuIndexCapabilities = { bm25: true };
  private readonly q;
  private readonly upsertTx;
  private readonly forgetTx;
  private readonly nearestTx;
  private readonly vectors = new Map<number, VectorStatements>();
  private readonly dimensions: number | undefined;
  private readonly oversample: number;
  private readonly minCandidates: number;

  /** `db` is shared and stays open after `close()`: its opener closes it. */
  constructor(
    private readonly db: Database,
    options: SqliteAcuIndexOptions = {},
  ) {
    migrate(db);
    this.dimensions = options.dimensions;
    this.oversample = options.oversample ?? 8;
    this.minCandidates = options.minCandidates ?? 128;
    const q = (this.q = prepareAcuStatements(db));
    this.upsertTx = db.transaction((scope: Scope, acus: readonly Acu[]) => this.upsertIn(scope, acus)).immediate;
    this.forgetTx = db.transaction((scope: Scope) => {
      const params = scopeParams(scope);
      for (const row of q.coded.all(...params)) this.statements(row.bytes / 4)?.remove.run(BigInt(row.rid));
      q.forgetFts.run(...params);
      q.forgetItems.run(...params);
      q.forgetScope.run(...params);
    }).immediate;
    // One read transaction: the candidates and the rows they name come from the same snapshot.
    this.nearestTx = db.transaction((scope: Scope, vectors: readonly Float32Array[], k: number) => vectors.map((v) => this.nearestIn(scope, v, k)));
  }

  /** Upsert by id; embeddings are normalised defensively so the search can use plain dot products. */
  async upsert(scope: Scope, acus: readonly Acu[]): Promise<void> {
    if (acus.length === 0) return;
    const wrong = this.dimensions === undefined ? undefined : acus.find((a) => a.embedding.length !== this.dimensions);
    if (wrong) throw new MemgateError('internal', `ACU ${wrong.id} has a ${wrong.embedding.length}-d embedding, the index holds ${this.dimensions}-d vectors (the embedder's)`, { retryable: false });
    this.upsertTx(scope, acus);
  }

  /** Cosine top-k over the user's ACUs, best first. */
  async search(scope: Scope, vector: Float32Array, k: number): Promise<AcuHit[]> {
    return (await this.nearestMany(scope, [vector], k))[0]!;
  }

  async nearestMany(scope: Scope, vectors: readonly Float32Array[], k: number): Promise<AcuHit[][]> {
    if (k <= 0 || vectors.length === 0) return vectors.map(() => []);
    for (const v of vectors) {
      if (this.dimensions !== undefined && v.length !== this.dimensions) {
        throw new MemgateError('bad_request', `query vector has ${v.length} dimensions, the index holds ${this.dimensions}-d vectors`);
      }
    }
    return this.nearestTx(scope, vectors, Math.floor(k));
  }

  /** BM25 top-k over the user's ACU texts, best first; `score` is -bm25 (larger = better). */
  async keywordSearch(scope: Scope, query: string, k: number): Promise<AcuHit[]> {
    const match = buildFtsMatch(scope, query);
    if (match === null || k <= 0) return [];
    return this.q.keyword.all(match, Math.floor(k)).map((row) => ({ acu: rowToAcu(row), score: -row.score }));
  }

  async count(scope: Scope): Promise<number> {
    return this.q.count.get(...scopeParams(scope))?.n ?? 0;
  }

  async forget(scope: Scope): Promise<void> {
    this.forgetTx(scope);
  }

  /** Nothing of its own to release; the shared Database is closed by whoever opened it. */
  async close(): Promise<void> {}

  private nearestIn(scope: Scope, vector: Float32Array, k: number): AcuHit[] {
    const dim = this.dimensions ?? this.firstDimension(scope);
    if (dim === undefined) return [];
    if (vector.length !== dim) throw new MemgateError('bad_request', `query vector has ${vector.length} dimensions, the user's ACUs have ${dim}`);
    const vec = this.statements(dim);
    if (!vec) return [];
    const query = l2Normalize(vector);
    const wanted = Math.max(k * this.oversample, this.minCandidates);
    // Past sqlite-vec's KNN limit (a k in the hundreds) every row of the user is a candidate: the exact scan.
    const vectors =
      wanted > KNN_LIMIT
        ? this.q.vectorsOfUser.all(...scopeParams(scope), dim * 4)
        : this.q.vectorsOf.all(JSON.stringify(vec.knn.all(binaryCode(query), wanted, ftsScopeToken(scope)).map((c) => c.rowid)));
    if (vectors.length === 0) return [];
    // Rescore from the vectors alone, then read whole rows for the k kept: a row's text and refs
    // cost as much to read and decode as its vector, and most candidates are dropped.
    const scored = vectors.map((row) => ({ rid: row.rid, score: dotBytes(row.embedding, query) }));
    // Ties: the older row first, as the exact scan this replaced answered.
    scored.sort((a, b) => b.score - a.score || a.rid - b.rid);
    const top = scored.slice(0, k);
    const rows = new Map(this.q.byRids.all(JSON.stringify(top.map((t) => t.rid))).map((row) => [row.rid, row]));
    return top.flatMap((t) => {
      const row = rows.get(t.rid);
      return row ? [{ acu: rowToAcu(row), score: t.score }] : [];
    });
  }

  private firstDimension(scope: Scope): number | undefined {
    const bytes = this.q.firstBytes.get(...scopeParams(scope))?.bytes;
    return bytes === undefined ? undefined : bytes / 4;
  }

  /** The vec0 statements for `dim`, or undefined while no connection has created its table. */
  private statements(dim: number, create = false): VectorStatements | undefined {
    const cached = this.vectors.get(dim);
    if (cached) return cached;
    const table = vectorTable(dim);
    if (create) ensureVectorTable(this.db, dim);
    else if (!this.db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?").get(table)!.n) return undefined;
    const made: VectorStatements = {
      knn: this.db.prepare<[Buffer, number, string], { rowid: number }>(`SELECT rowid FROM ${table} WHERE code MATCH vec_bit(?) AND k = ? AND sk = ?`),
      // Rowids and partition keys cross into vec0 as BigInt: a JS number binds as REAL, which vec0 refuses as a rowid.
      insert: this.db.prepare<[bigint, string, Buffer]>(`INSERT INTO ${table} (rowid, sk, code) VALUES (?, ?, vec_bit(?))`),
      remove: this.db.prepare<[bigint]>(`DELETE FROM ${table} WHERE rowid = ?`),
    };
    this.vectors.set(dim, made);
    return made;
  }

  private upsertIn(scope: Scope, acus: readonly Acu[]): void {
    const params = scopeParams(scope);
    const sk = ftsScopeToken(scope);
    for (const acu of acus) {
      const vector = l2Normalize(acu.embedding);
      const before = this.q.previous.get(acu.id);
      const row = this.q.upsert.get(acu.id, ...params, acu.text, embeddingBlob(vector), JSON.stringify(acu.turnRefs), acu.sessionId, acu.validAt, acu.createdAt, acu.contentHash);
      if (!row) throw new MemgateError('internal', `ACU id ${acu.id} already belongs to another user`);
      if (before) this.statements(before.bytes / 4)?.remove.run(BigInt(before.rid));
      this.statements(vector.length, true)!.insert.run(BigInt(row.rid), sk, binaryCode(vector));
      this.q.ftsDelete.run(row.rid);
      this.q.ftsInsert.run(row.rid, sk, acu.text);
    }
  }
}

/** Dot product of stored Float32 bytes with `query` (copied first: a Buffer from SQLite need not be 4-byte aligned). */
function dotBytes(bytes: Buffer, query: Float32Array): number {
  const v = new Float32Array(new Uint8Array(bytes).buffer, 0, Math.min(query.length, bytes.byteLength >> 2));
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * query[i]!;
  return s;
}

function scopeParams(scope: Scope): [string, string, string] {
  return [scope.tenantId, scope.agentId, scope.userId];
}
