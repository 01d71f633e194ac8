/** OpenAI-compatible adapters of the Extractor and Embedder ports (imported only by the wiring). */
export { OpenAiExtractor } from './openai-extractor.ts';
export type { OpenAiExtractorOptions } from './openai-extractor.ts';
export { OpenAiEmbedder } from './openai-embedder.ts';
export type { OpenAiEmbedderOptions } from './openai-embedder.ts';
export { classifyOpenAiError } from './errors.ts';
