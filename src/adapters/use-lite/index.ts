/** Universal Sentence Encoder lite, in process (port `Embedder`; imported only by the wiring). */
export { UseLiteEmbedder, USE_LITE_DIMENSIONS, splitText, type UseLiteEmbedderOptions } from './use-lite-embedder.ts';
export { loadUseLite } from './model.ts';
