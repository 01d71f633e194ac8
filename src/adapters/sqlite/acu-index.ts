import { MemgateError } from '../../core/errors.ts';
import type { Acu, Scope } from '../../core/types.ts';
import type { AcuHit, AcuIndex, AcuIndexCapabilities } from '../../ports/acu-index.ts';
import { embeddingBlob, rowToAcu } from './acu-row.ts';
import { prepareAcuStatements } from './acu-statements.ts';
import type { Database } from './database.ts';
import { buildFtsMatch, ftsScopeToken } from './fts-query.ts';
import { migrate } from './migrations.ts';
import { PackedVectors } from './packed-vectors.ts';
import { VectorCache } from './vector-cache.ts';
import { l2Normalize, topKDot } from './vector-math.ts';

/** Tuning of SqliteAcuIndex. */
export interface SqliteAcuIndexOptions {
  /** Budget of the packed per-user vector cache (default 256 MiB, ~170 users of 10k x 384-d). */
  maxCacheBytes?: number;
  /**
   * The embedder's vector size. Set, the index searches only rows of this size (rows an
   * earlier embedder wrote stay findable by keyword until re-embedded) and refuses to store
   * or search with vectors of another size. Unset, a user's first stored row sets it.
   */
  dimensions?: number;
}

interface UpsertResult {
  previous: number;
  version: number;
  written: Array<{ rid: number; vector: Float32Array }>;
}

/**
 * Tier 2, embedded: ACU rows in SQLite, exact cosine in JS over a cached packed
 * matrix of the user's vectors (stored L2-normalised, so cosine = dot), and an
 * FTS5 table for the BM25 leg. The cache is patched by this instance's upserts
 * and revalidated on every search against the user's write generation, so
 * writes through another connection are seen too.
 */
export class SqliteAcuIndex implements AcuIndex {
  readonly capabilities: AcuIndexCapabilities = { bm25: true };
  private readonly cache: VectorCache;
  private readonly q;
  private readonly upsertTx;
  private readonly forgetTx;
  private readonly loadTx;
  private readonly deltaTx;
  private readonly dimensions: number | undefined;

  /** `db` is shared and stays open after `close()`: its opener closes it. */
  constructor(db: Database, options: SqliteAcuIndexOptions = {}) {
    migrate(db);
    this.dimensions = options.dimensions;
    this.cache = new VectorCache(options.maxCacheBytes ?? 256 * 1024 * 1024);
    const q = (this.q = prepareAcuStatements(db));
    this.upsertTx = db.transaction((scope: Scope, acus: readonly Acu[]) => this.upsertIn(scope, acus)).immediate;
    this.forgetTx = db.transaction((scope: Scope) => {
      const params = scopeParams(scope);
      q.forgetFts.run(...params);
      q.forgetItems.run(...params);
      q.forgetScope.run(...params);
    }).immediate;
    // One read transaction, so the version and the rows come from the same snapshot.
    this.loadTx = db.transaction((scope: Scope) => {
      const params = scopeParams(scope);
      const stamp = q.version.get(...params);
      const packed = PackedVectors.fromRows(q.vectors.all(...params), stamp?.version ?? 0, this.dimensions);
      packed.since = stamp?.since ?? 0;
      return packed;
    });
    // Rows another connection (the extraction thread) wrote since `from`: patching them in
    // costs a few rows instead of reloading 10k vectors on the first search after every extraction.
    this.deltaTx = db.transaction((scope: Scope, from: number) => {
      const params = scopeParams(scope);
      return { stamp: q.version.get(...params), rows: q.vectorsSince.all(...params, from) };
    });
  }

  /** Upsert by id; embeddings are normalised defensively so the search can use plain dot products. */
  async upsert(scope: Scope, acus: readonly Acu[]): Promise<void> {
    if (acus.length === 0) return;
    const wrong = this.dimensions === undefined ? undefined : acus.find((a) => a.embedding.length !== this.dimensions);
    if (wrong) throw new MemgateError('internal', `ACU ${wrong.id} has a ${wrong.embedding.length}-d embedding, the index holds ${this.dimensions}-d vectors (the embedder's)`, { retryable: false });
    const key = cacheKey(scope);
    let result: UpsertResult;
    try {
      result = this.upsertTx(scope, acus);
    } catch (err) {
      this.cache.invalidate(key);
      throw err;
    }
    const entry = this.cache.get(key);
    if (!entry) return;
    if (entry.version !== result.previous || result.written.some((w) => w.vector.length !== entry.dim)) {
      this.cache.invalidate(key);
      return;
    }
    this.cache.update(key, (e) => {
      for (const w of result.written) e.set(w.rid, w.vector);
      e.version = result.version;
    });
  }

  /** Exact cosine top-k over the user's ACUs, best first. */
  async search(scope: Scope, vector: Float32Array, k: number): Promise<AcuHit[]> {
    if (k <= 0) return [];
    if (this.dimensions !== undefined && vector.length !== this.dimensions) {
      throw new MemgateError('bad_request', `query vector has ${vector.length} dimensions, the index holds ${this.dimensions}-d vectors`);
    }
    const key = cacheKey(scope);
    const version = this.q.version.get(...scopeParams(scope))?.version;
    if (version === undefined) {
      this.cache.invalidate(key);
      return [];
    }
    let packed = this.cache.get(key);
    if (packed && packed.version !== version) packed = this.patch(key, scope, packed);
    if (!packed) {
      packed = this.loadTx(scope);
      this.cache.put(key, packed);
    }
    if (packed.count === 0) return [];
    if (vector.length !== packed.dim) {
      throw new MemgateError('bad_request', `query vector has ${vector.length} dimensions, the user's ACUs have ${packed.dim}`);
    }
    const hits: AcuHit[] = [];
    for (const { index, score } of topKDot(packed.matrix, packed.dim, packed.count, l2Normalize(vector), k)) {
      const row = this.q.byRid.get(packed.ridAt(index));
      if (row) hits.push({ acu: rowToAcu(row), score });
    }
    return hits;
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
      this.cache.invalidate(cacheKey(scope));
    }
  }

  /** Drops the vector cache; the shared Database is closed by whoever opened it. */
  async close(): Promise<void> {
    this.cache.clear();
  }

  /** Bring a stale cache entry up to date with the rows written since; undefined = reload it whole. */
  private patch(key: string, scope: Scope, packed: PackedVectors): PackedVectors | undefined {
    const { stamp, rows } = this.deltaTx(scope, packed.version);
    if (!stamp || stamp.since !== packed.since || rows.some((r) => r.embedding.byteLength !== packed.dim * 4)) {
      this.cache.invalidate(key);
      return undefined;
    }
    this.cache.update(key, (e) => {
      for (const r of rows) e.set(r.rid, bytesToVector(r.embedding, e.dim));
      e.version = stamp.version;
    });
    return packed;
  }

  private upsertIn(scope: Scope, acus: readonly Acu[]): UpsertResult {
    const params = scopeParams(scope);
    const previous = this.q.version.get(...params)?.version ?? 0;
    const version = this.q.nextGeneration.get()!.value;
    this.q.stamp.run(...params, version, version);
    const sk = ftsScopeToken(scope);
    const written: UpsertResult['written'] = [];
    for (const acu of acus) {
      const vector = l2Normalize(acu.embedding);
      const row = this.q.upsert.get(acu.id, ...params, acu.text, embeddingBlob(vector), JSON.stringify(acu.turnRefs), acu.sessionId, acu.validAt, acu.createdAt, acu.contentHash, version);
      if (!row) throw new MemgateError('internal', `ACU id ${acu.id} already belongs to another user`);
      this.q.ftsDelete.run(row.rid);
      this.q.ftsInsert.run(row.rid, sk, acu.text);
      written.push({ rid: row.rid, vector });
    }
    return { previous, version, written };
  }
}

/** A stored embedding blob as a Float32Array (copied: SQLite's Buffer need not be 4-byte aligned). */
function bytesToVector(bytes: Uint8Array, dim: number): Float32Array {
  const v = new Float32Array(dim);
  new Uint8Array(v.buffer).set(bytes.subarray(0, dim * 4));
  return v;
}

function scopeParams(scope: Scope): [string, string, string] {
  return [scope.tenantId, scope.agentId, scope.userId];
}

function cacheKey(scope: Scope): string {
  return `${scope.tenantId}\u0000${scope.agentId}\u0000${scope.userId}`;
}
