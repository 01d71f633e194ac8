/** An Embedder made of several (port `Embedder`; imported only by the wiring). */
export { FusedEmbedder, type FusedPart } from './fused-embedder.ts';
