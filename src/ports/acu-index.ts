import type { Acu, Scope } from '../core/types.ts';

/** A scored ACU. `score` is cosine similarity for vector hits, engine BM25 for keyword hits. */
export interface AcuHit {
  acu: Acu;
  score: number;
}

/** What an index can do beyond vector search: capability flags instead of optional methods that throw. */
export interface AcuIndexCapabilities {
  /** `keywordSearch` ranks by BM25 (the hybrid leg). */
  readonly bm25: boolean;
}

/** Tier 2: ACUs with embeddings, filtered per user. Upsert by `id` (deterministic), so retries never duplicate. */
export interface AcuIndex {
  readonly capabilities: AcuIndexCapabilities;
  upsert(scope: Scope, acus: readonly Acu[]): Promise<void>;
  /** Top-k by cosine similarity within the user's ACUs, best first. */
  search(scope: Scope, vector: Float32Array, k: number): Promise<AcuHit[]>;
  /**
   * `search` for many vectors at once: the i-th list is what `search(scope, vectors[i], k)`
   * answers, in one engine round trip where the engine batches (de-duplicating a window's ACUs).
   */
  nearestMany(scope: Scope, vectors: readonly Float32Array[], k: number): Promise<AcuHit[][]>;
  /** Top-k by BM25 within the user's ACUs, best first (empty when `capabilities.bm25` is false). */
  keywordSearch(scope: Scope, query: string, k: number): Promise<AcuHit[]>;
  count(scope: Scope): Promise<number>;
  forget(scope: Scope): Promise<void>;
  close(): Promise<void>;
}
