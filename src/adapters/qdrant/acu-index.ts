import { QdrantClient } from '@qdrant/js-client-rest';
import { MemgateError } from '../../core/errors.ts';
import type { Acu, Scope } from '../../core/types.ts';
import type { AcuHit, AcuIndex, AcuIndexCapabilities } from '../../ports/acu-index.ts';
import { rankBm25 } from './bm25.ts';
import { ensureCollection } from './collection.ts';
import { classifyQdrantError } from './errors.ts';
import { keywordScroll, pointToAcu, scopeFilter, toPoint, UPSERT_BATCH, vectorQuery } from './queries.ts';
import { CONFIG_DEFAULTS } from '../../config/config-schema.ts';

/** Connection and collection settings (config `qdrant` plus the embedder's dimensions). */
export interface QdrantAcuIndexOptions {
  url: string;
  apiKey?: string | undefined;
  collection: string;
  /** Vector size the collection is created with and every ACU must have. */
  dimensions: number;
  /** Per-request timeout of the REST client. */
  timeoutMs?: number;
}

/**
 * Tier 2 on Qdrant: one collection for every tenant, each point's scope in its payload and a
 * `must` filter on it in every request (Qdrant's payload-partitioned multitenancy). Writes use
 * `wait: true`, so a search right after an upsert or forget sees it.
 */
export class QdrantAcuIndex implements AcuIndex {
  /** The BM25 leg runs in-process over the user's newest scrolled payloads. */
  readonly capabilities: AcuIndexCapabilities = { bm25: true };

  constructor(
    private readonly client: QdrantClient,
    private readonly collection: string,
    private readonly dimensions: number,
  ) {}

  async upsert(scope: Scope, acus: readonly Acu[]): Promise<void> {
    for (const acu of acus) this.checkDimensions(acu.embedding, `ACU ${acu.id}`);
    for (let i = 0; i < acus.length; i += UPSERT_BATCH) {
      const points = acus.slice(i, i + UPSERT_BATCH).map((acu) => toPoint(scope, acu));
      await this.call('upsert', () => this.client.upsert(this.collection, { wait: true, points }));
    }
  }

  async search(scope: Scope, vector: Float32Array, k: number): Promise<AcuHit[]> {
    if (k <= 0) return [];
    this.checkDimensions(vector, 'query vector');
    const res = await this.call('query', () => this.client.query(this.collection, vectorQuery(scope, vector, k)));
    // Cosine collections score by the dot product of normalised vectors: the score is the cosine.
    return res.points.map((p) => ({ acu: pointToAcu(p), score: p.score }));
  }

  /** One `query/batch` request for every vector: the answers come back in request order. */
  async nearestMany(scope: Scope, vectors: readonly Float32Array[], k: number): Promise<AcuHit[][]> {
    if (k <= 0 || vectors.length === 0) return vectors.map(() => []);
    for (const v of vectors) this.checkDimensions(v, 'query vector');
    const res = await this.call('query batch', () => this.client.queryBatch(this.collection, { searches: vectors.map((v) => vectorQuery(scope, v, k)) }));
    return res.map((r) => r.points.map((p) => ({ acu: pointToAcu(p), score: p.score })));
  }

  /**
   * Scroll the user's newest ≤1,000 payloads (text only), rank them with BM25 in-process, then
   * fetch only the top k with their vectors: 1,000 vectors would be megabytes of JSON per query.
   */
  async keywordSearch(scope: Scope, query: string, k: number): Promise<AcuHit[]> {
    if (k <= 0 || query.trim() === '') return [];
    const page = await this.call('scroll', () => this.client.scroll(this.collection, keywordScroll(scope)));
    const docs = page.points.map((p) => ({ key: String(p.id), text: typeof p.payload?.['text'] === 'string' ? p.payload['text'] : '' }));
    const ranked = await rankBm25(query, docs, k);
    if (ranked.length === 0) return [];
    const records = await this.call('retrieve', () => this.client.retrieve(this.collection, { ids: ranked.map((r) => r.key), with_payload: true, with_vector: true }));
    const byId = new Map(records.map((r) => [String(r.id), r]));
    const hits: AcuHit[] = [];
    for (const r of ranked) {
      const record = byId.get(r.key);
      // A point forgotten between the scroll and the retrieve is simply not a hit.
      if (record !== undefined) hits.push({ acu: pointToAcu(record), score: r.score });
    }
    return hits;
  }

  async count(scope: Scope): Promise<number> {
    const res = await this.call('count', () => this.client.count(this.collection, { filter: scopeFilter(scope), exact: true }));
    return res.count;
  }

  async forget(scope: Scope): Promise<void> {
    await this.call('delete', () => this.client.delete(this.collection, { wait: true, filter: scopeFilter(scope) }));
  }

  /** The REST client holds no connection that needs closing (undici pools idle sockets out). */
  async close(): Promise<void> {}

  private checkDimensions(vector: Float32Array, what: string): void {
    if (vector.length !== this.dimensions) {
      throw new MemgateError('internal', `qdrant: ${what} has ${vector.length} dimensions, the collection ${this.collection} has ${this.dimensions}`, { retryable: false });
    }
  }

  private async call<T>(op: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw classifyQdrantError(err, op);
    }
  }
}

/** Connect, ensure the collection and its payload indexes, and return the index. */
export async function createQdrantAcuIndex(options: QdrantAcuIndexOptions): Promise<QdrantAcuIndex> {
  const client = new QdrantClient({
    url: options.url,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    timeout: options.timeoutMs ?? CONFIG_DEFAULTS.qdrant.timeoutMs,
    // The check only console.warns in the background; ensureCollection below fails loudly instead.
    checkCompatibility: false,
  });
  await ensureCollection(client, options.collection, options.dimensions);
  return new QdrantAcuIndex(client, options.collection, options.dimensions);
}
