/** Text → unit-length vector. Adapters: the offline deterministic default and any OpenAI-compatible endpoint. */
export interface Embedder {
  readonly id: string;
  readonly dimensions: number;
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
