/** USE-lite distilled into a static piece table (port `Embedder`; imported only by the wiring). */
export { StaticUseEmbedder, type StaticUseEmbedderOptions } from './static-embedder.ts';
export { DEFAULT_RECIPE, defaultCacheDir, readTable, tablePath, type Recipe, type Teacher } from './table.ts';
