/** Universal Sentence Encoder lite, in process or on an embed thread (port `Embedder`; imported only by the wiring). */
export { UseLiteEmbedder, firstWords, splitText, type UseLiteEmbedderOptions } from './use-lite-embedder.ts';
export { loadUseLite, USE_LITE_DIMENSIONS, type UseLiteModel, type UseLiteRuntime } from './model.ts';
export { leaseUseLiteThread, crashUseLiteThreadForTests, useLiteThreadRunning } from './model-thread.ts';
