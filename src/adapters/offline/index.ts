/** Offline (no network) adapters of the Extractor and Embedder ports (imported only by the wiring). */
export { OfflineExtractor, type OfflineExtractorOptions } from './offline-extractor.ts';
export { OfflineEmbedder, type OfflineEmbedderOptions } from './offline-embedder.ts';
