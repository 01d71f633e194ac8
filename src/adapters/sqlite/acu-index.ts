import type BetterSqlite3 from 'better-sqlite3';
import { MemgateError } from '../../core/errors.ts';
import type { Acu, Scope } from '../../core/types.ts';
import type { AcuHit, AcuIndex, AcuIndexCapabilities } from '../../ports/acu-index.ts';
import { CONFIG_DEFAULTS } from '../../config/config-schema.ts';
import { embeddingBlob, rowToAcu } from './acu-row.ts';
import { prepareAcuStatements } from './acu-statements.ts';
import { CodeCache, ScanScratch, UserCodes } from './code-cache.ts';
import type { Database } from './database.ts';
import { buildFtsMatch, ftsScopeToken } from './fts-query.ts';
import { migrate } from './migrations.ts';
import { l2Normalize } from './vector-math.ts';
import { binaryCode, bytesToVector, ensureVectorTable, vectorTable } from './vector-tables.ts';

/** Tuning of SqliteAcuIndex. */
export interface SqliteAcuIndexOptions {
  /**
   * The embedder's vector size. Set, the index searches only rows of this size (rows an
   * earlier embedder wrote stay findable by keyword until re-embedded) and refuses to store
   * or search with vectors of another size. Unset, a user's first stored row sets it.
   */
  dimensions?: number;
  /**
   * Candidates handed to the exact rescore: the most of `oversample` per hit asked for
   * (default 8), `minCandidates` (default 128) and `candidateShare` of the user's rows (default
   * 0.004). The share is what keeps recall as a user grows: the codes that beat a true neighbour
   * grow with the rows. They are picked from `shortlistFactor` times as many (default 4) nearest
   * by Hamming distance, ranked by the query's floats against the codes' signs. Measured
   * (BENCHMARKS.md, vector engine): 100k topic-clustered 896-d vectors keep 0.963 of the exact
   * top-10 with 300 candidates by Hamming alone and 1.0 with 500; ranked from a shortlist 4 times
   * as long, 0.975 with 200, 0.995 with 300 and 0.999 with 400.
   */
  oversample?: number;
  minCandidates?: number;
  candidateShare?: number;
  shortlistFactor?: number;
  /**
   * Budget of the users' binary codes held in memory, in MiB (config `sqlite.vectorCacheMiB`,
   * default CONFIG_DEFAULTS). 0 turns the cache off: every search asks sqlite-vec's KNN.
   */
  vectorCacheMiB?: number;
}

/** Codes of a user that has no row of the searched size. */
const NO_CODES = 'none';

/** Forget the users found too big for the budget past this many (a bound, not a tuning knob). */
const OVERSIZED_LIMIT = 10_000;

/** The largest k sqlite-vec 0.1.9 accepts in a KNN query. */
const KNN_LIMIT = 4096;

interface VectorStatements {
  knn: BetterSqlite3.Statement<[Buffer, number, string], { rowid: number }>;
  insert: BetterSqlite3.Statement<[bigint, string, Buffer]>;
  remove: BetterSqlite3.Statement<[bigint]>;
}

/**
 * Tier 2, embedded: ACU rows in SQLite, an FTS5 table for the BM25 leg, and a sqlite-vec
 * vec0 table per embedding size holding each row's sign bits, partitioned by user.
 *
 * A vector search picks candidates from the sign-bit codes (a Hamming shortlist, ranked by the
 * query's floats against the codes' signs), then rescores them exactly by cosine from their
 * stored Float32 vectors (stored L2-normalised, so cosine = dot), read in one `IN (...)` query
 * for all the queries of a nearestMany. The candidates come from the user's codes held
 * in memory (code-cache.ts: a popcount scan costs the same for any number of candidates, where
 * sqlite-vec's KNN grows with them and missed the 100k target), bounded by an LRU byte budget.
 * A user's codes load from acu_codes, a copy of the codes clustered by user (a range read; vec0
 * answers a partition-key read only by scanning every user's codes), and a user too big for the
 * budget (or any user with the budget at 0) is searched with vec0's KNN, which does use the partition.
 *
 * Writes through another connection (the extraction thread writes, the gateway searches) are
 * seen at once: every search reads the user's write stamp (acu_scopes plus the newest rid, two
 * index seeks) in the same read transaction as the rows, appends the rows written past the
 * cached ones, and reloads the codes when a write rewrote a code in place or the user was
 * forgotten and written again (a new `since`).
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
  private readonly candidateShare: number;
  private readonly shortlistFactor: number;
  private readonly cache: CodeCache | undefined;
  private readonly scratch = new ScanScratch();
  /** Users whose codes would not fit the budget, with the `since` they were measured at. */
  private readonly oversized = new Map<string, number>();

  /** `db` is shared and stays open after `close()`: its opener closes it. */
  constructor(
    private readonly db: Database,
    options: SqliteAcuIndexOptions = {},
  ) {
    migrate(db);
    this.dimensions = options.dimensions;
    this.oversample = options.oversample ?? 8;
    this.minCandidates = options.minCandidates ?? 128;
    this.candidateShare = options.candidateShare ?? 0.004;
    this.shortlistFactor = options.shortlistFactor ?? 4;
    const budget = (options.vectorCacheMiB ?? CONFIG_DEFAULTS.sqlite.vectorCacheMiB) * 1024 * 1024;
    this.cache = budget > 0 ? new CodeCache(budget) : undefined;
    const q = (this.q = prepareAcuStatements(db));
    this.upsertTx = db.transaction((scope: Scope, acus: readonly Acu[]) => this.upsertIn(scope, acus)).immediate;
    this.forgetTx = db.transaction((scope: Scope) => {
      const params = scopeParams(scope);
      for (const row of q.coded.all(...params)) this.statements(row.bytes / 4)?.remove.run(BigInt(row.rid));
      q.forgetCodes.run(...params);
      q.forgetFts.run(...params);
      q.forgetItems.run(...params);
      q.forgetScope.run(...params);
    }).immediate;
    // One read transaction: the stamp, the candidates and the rows they name come from the same snapshot.
    this.nearestTx = db.transaction((scope: Scope, vectors: readonly Float32Array[], k: number) => this.nearestIn(scope, vectors, k));
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
    try {
      this.forgetTx(scope);
    } finally {
      this.cache?.drop(cacheKey(scope));
    }
  }

  /** Bytes and users of the in-memory codes (for the bench and diagnostics). */
  cacheStats(): { bytes: number; users: number } {
    return { bytes: this.cache?.bytes ?? 0, users: this.cache?.size ?? 0 };
  }

  /** Drops the in-memory codes; the shared Database is closed by whoever opened it. */
  async close(): Promise<void> {
    this.cache?.clear();
    this.oversized.clear();
  }

  private nearestIn(scope: Scope, vectors: readonly Float32Array[], k: number): AcuHit[][] {
    const dim = this.dimensions ?? this.firstDimension(scope);
    if (dim === undefined) return vectors.map(() => []);
    for (const v of vectors) if (v.length !== dim) throw new MemgateError('bad_request', `query vector has ${v.length} dimensions, the user's ACUs have ${dim}`);
    const vec = this.statements(dim);
    if (!vec) return vectors.map(() => []);
    const codes = this.codesOf(scope, dim);
    if (codes === NO_CODES) return vectors.map(() => []);
    const queries = vectors.map((v) => l2Normalize(v));
    const base = Math.max(k * this.oversample, this.minCandidates);
    // Candidate rids per query: a scan of the cached codes, or sqlite-vec's KNN for a user not cached.
    let candidates: number[][];
    if (codes) {
      const wanted = Math.max(base, Math.ceil(codes.count * this.candidateShare));
      candidates = queries.map((q) => codes.nearest(q, wanted, wanted * this.shortlistFactor, this.scratch));
    } else {
      const wanted = Math.max(base, Math.ceil((this.q.count.get(...scopeParams(scope))?.n ?? 0) * this.candidateShare));
      // Past sqlite-vec's KNN limit (a k in the hundreds) every row of the user is a candidate: the exact scan.
      const all = wanted > KNN_LIMIT ? this.q.vectorsOfUser.all(...scopeParams(scope), dim * 4).map((r) => r.rid) : undefined;
      candidates = queries.map((q) => all ?? vec.knn.all(binaryCode(q), wanted, ftsScopeToken(scope)).map((c) => c.rowid));
    }
    // One read of the vectors of every query's candidates, then one read of the rows kept: a row's
    // text and refs cost as much to read and decode as its vector, and most candidates are dropped.
    const stored = new Map<number, Buffer>();
    const union = [...new Set(candidates.flat())];
    for (const row of this.q.vectorsOf.all(JSON.stringify(union))) if (row.embedding.byteLength === dim * 4) stored.set(row.rid, row.embedding);
    // One aligned buffer the stored bytes are copied into (a Buffer from SQLite need not be 4-byte aligned): no garbage per candidate.
    const v = new Float32Array(dim);
    const bytes = new Uint8Array(v.buffer);
    const tops = queries.map((query, i) => {
      const scored: Array<{ rid: number; score: number }> = [];
      for (const rid of candidates[i]!) {
        const embedding = stored.get(rid);
        if (!embedding) continue;
        bytes.set(embedding);
        scored.push({ rid, score: dot(v, query) });
      }
      // Ties: the older row first, as the exact scan this replaced answered.
      scored.sort((a, b) => b.score - a.score || a.rid - b.rid);
      return scored.slice(0, k);
    });
    const rows = new Map(this.q.byRids.all(JSON.stringify([...new Set(tops.flat().map((t) => t.rid))])).map((row) => [row.rid, row]));
    return tops.map((top) =>
      top.flatMap((t) => {
        const row = rows.get(t.rid);
        return row ? [{ acu: rowToAcu(row), score: t.score }] : [];
      }),
    );
  }

  /**
   * The user's codes of size `dim`, current with the database (this runs inside the search's read
   * transaction); NO_CODES when the user has no row; undefined when they are not cached (the
   * budget is 0 or too small for this user): the caller asks sqlite-vec.
   */
  private codesOf(scope: Scope, dim: number): UserCodes | typeof NO_CODES | undefined {
    const key = cacheKey(scope);
    const params = scopeParams(scope);
    const stamp = this.q.stamp.get(...params, ...params)!;
    if (stamp.maxRid === null) {
      this.cache?.drop(key);
      return NO_CODES;
    }
    if (!this.cache) return undefined;
    // A user with rows but no stamp was written by code that did not stamp: `since` 0, and the newest rid still tells.
    const since = stamp.since ?? 0;
    const version = stamp.version ?? 0;
    const cached = this.cache.get(key);
    if (cached && cached.since === since && cached.dim === dim) {
      if (cached.version !== version || cached.maxRid !== stamp.maxRid) {
        for (const row of this.q.vectorsSince.all(...params, cached.maxRid, dim * 4)) cached.push(row.rid, binaryCode(bytesToVector(row.embedding)));
        cached.version = version;
        cached.maxRid = stamp.maxRid;
        this.cache.put(key, cached);
      }
      return cached;
    }
    if (this.oversized.get(key) === since) return undefined;
    const rows = this.q.count.get(...params)?.n ?? 0;
    const loaded = new UserCodes(dim, since, version, stamp.maxRid, rows);
    if (loaded.bytes > this.cache.budgetBytes) {
      if (this.oversized.size >= OVERSIZED_LIMIT) this.oversized.clear();
      this.oversized.set(key, since);
      this.cache.drop(key);
      return undefined;
    }
    for (const row of this.q.codesOfUser.iterate(...params, Math.ceil(dim / 8))) loaded.push(row.rid, row.code);
    this.cache.put(key, loaded);
    return loaded;
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
    // Whether a row kept its rid with another code: cached codes then reload instead of appending.
    let rewrote = false;
    for (const acu of acus) {
      const vector = l2Normalize(acu.embedding);
      const code = binaryCode(vector);
      const before = this.q.previous.get(acu.id);
      const row = this.q.upsert.get(acu.id, ...params, acu.text, embeddingBlob(vector), JSON.stringify(acu.turnRefs), acu.sessionId, acu.validAt, acu.createdAt, acu.contentHash);
      if (!row) throw new MemgateError('internal', `ACU id ${acu.id} already belongs to another user`);
      if (before) {
        rewrote ||= before.embedding.byteLength !== vector.length * 4 || !binaryCode(bytesToVector(before.embedding)).equals(code);
        this.statements(before.embedding.byteLength / 4)?.remove.run(BigInt(before.rid));
      }
      this.statements(vector.length, true)!.insert.run(BigInt(row.rid), sk, code);
      this.q.putCode.run(...params, row.rid, code);
      this.q.ftsDelete.run(row.rid);
      this.q.ftsInsert.run(row.rid, sk, acu.text);
    }
    const generation = this.q.nextGeneration.get()!.value;
    this.q.writeStamp.run(...params, generation, generation, rewrote ? 1 : 0);
  }
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

function cacheKey(scope: Scope): string {
  return `${scope.tenantId}\u0000${scope.agentId}\u0000${scope.userId}`;
}

function scopeParams(scope: Scope): [string, string, string] {
  return [scope.tenantId, scope.agentId, scope.userId];
}
