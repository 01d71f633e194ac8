/** The Qdrant ACU index (production tier 2). Only `src/app/wiring.ts` imports this, lazily. */
export { QdrantAcuIndex, createQdrantAcuIndex, type QdrantAcuIndexOptions } from './acu-index.ts';
export { rankBm25, scoreBm25, tokenize, type Bm25Doc, type Bm25Hit } from './bm25.ts';
