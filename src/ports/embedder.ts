/** Text → unit-length vector. Adapters: the offline deterministic default and any OpenAI-compatible endpoint. */
export interface Embedder {
  readonly id: string;
  readonly dimensions: number;
  /**
   * How to read this embedder's cosine, when it is known: whether it measures meaning and where
   * relatedness starts. Absent: unknown, and memory treats the cosine as word overlap (the fact
   * and recent tiers then match lexically only).
   */
  readonly cosineScale?: CosineScale;
  /** One L2-normalised vector per text, in order. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /**
   * Vectors in this embedder's space from its cheap (lexical) parts only, unit length: what an
   * extraction lane that is behind indexes now, re-embedding with `embed` when the CPU allows
   * (pipeline/deferred-acus.ts). Absent when the embedder has no cheap part.
   */
  embedLexical?(texts: readonly string[]): Promise<Float32Array[]>;
  /** Model-backed embedders: load the model now rather than on the first call. */
  warm?(): Promise<unknown>;
}

/**
 * An embedder's cosine distribution, measured over question × text pairs
 * (scripts/calibrate-semantic-tiers.ts: LoCoMo questions against the turn that answers them and
 * against turns of another conversation).
 */
export interface CosineScale {
  /** True when a high cosine means the same meaning (a sentence encoder), false when it means shared words (hashing). */
  meaning: boolean;
  /** A cosine unrelated texts rarely reach: the 99th percentile of question × unrelated turn. */
  floor: number;
  /** A cosine most related texts reach: the 90th percentile of question × answering turn. */
  strong: number;
}
