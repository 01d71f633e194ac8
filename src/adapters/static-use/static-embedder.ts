import { MemgateError } from '../../core/errors.ts';
import type { Embedder } from '../../ports/embedder.ts';
import { PieceTokenizer } from '../../text/piece-tokenizer.ts';
import { DEFAULT_RECIPE, defaultCacheDir, distilTable, installedModel, readTable, tableKey, tablePath, writeTable, type Recipe, type StaticTable, type Teacher } from './table.ts';

export interface StaticUseEmbedderOptions {
  /** Builds the table when no cached one fits (the wiring passes USE-lite on its embed thread). */
  teacher?: () => { embed: Teacher; close?: () => Promise<void> };
  /** Where tables are cached (default `node_modules/.cache/memgate`). */
  cacheDir?: string;
  recipe?: Recipe;
  /** Told once the table is ready: loaded from the cache or built (with the build's duration). */
  onReady?: (info: { path: string; built: boolean; ms: number; dimensions: number }) => void;
  /** Told when the built table could not be cached (a read-only install): it is used from memory. */
  onCacheError?: (err: unknown) => void;
}

/** Words whose pieces are remembered; a voice agent's vocabulary fits many times over. */
const WORD_CACHE = 50_000;

/**
 * USE-lite distilled into a static table (Model2Vec's recipe, port `Embedder`, id
 * `use-static-v1`): a text is the weighted mean of its SentencePiece pieces' rows,
 * L2-normalised. Pure JS and synchronous once the table is loaded, no model at query time,
 * so it runs on the gateway's event loop. The table is built once from the installed model
 * package and cached on disk (table.ts); calls made before it is ready wait for it.
 */
export class StaticUseEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  private readonly recipe: Recipe;
  private ready: Promise<StaticTable> | null = null;
  private table: StaticTable | null = null;
  private tokenizer: { encode(text: string): number[] } | null = null;
  private readonly words = new Map<string, number[]>();
  private fallback: Float32Array;

  constructor(private readonly options: StaticUseEmbedderOptions = {}) {
    this.recipe = options.recipe ?? DEFAULT_RECIPE;
    if (this.recipe.dimensions !== null && !(Number.isInteger(this.recipe.dimensions) && this.recipe.dimensions > 0 && this.recipe.dimensions <= 512)) {
      throw new MemgateError('bad_request', `static embedder: dimensions must be an integer in 1..512 or null, got ${this.recipe.dimensions}`);
    }
    this.dimensions = this.recipe.dimensions ?? 512;
    this.id = `use-static-v${this.recipe.version}-${this.dimensions}`;
    this.fallback = new Float32Array(this.dimensions);
    this.fallback[0] = 1;
  }

  /** Load the table (or build and cache it) now; resolves to it. */
  warm(): Promise<StaticTable> {
    if (this.ready) return this.ready;
    const attempt = this.load();
    this.ready = attempt;
    attempt.catch(() => {
      if (this.ready === attempt) this.ready = null;
    });
    return attempt;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (!this.table) await this.warm();
    return texts.map((t) => this.embedSync(t));
  }

  /** One unit vector, synchronously; throws `unavailable` while the table is not loaded. */
  embedSync(text: string): Float32Array {
    const table = this.table;
    if (!table) throw new MemgateError('unavailable', 'static embedder: the table is not loaded yet (await warm())');
    const d = table.dimensions;
    const out = new Float32Array(d);
    for (const word of text.normalize('NFKC').split(/\s+/)) {
      if (word.length === 0) continue;
      for (const id of this.pieces(word)) {
        const base = id * d;
        for (let j = 0; j < d; j++) out[j]! += table.rows[base + j]!;
      }
    }
    let norm = 0;
    for (let j = 0; j < d; j++) norm += out[j]! * out[j]!;
    if (norm === 0) return this.fallback.slice();
    const inv = 1 / Math.sqrt(norm);
    for (let j = 0; j < d; j++) out[j]! *= inv;
    return out;
  }

  /**
   * The model's own tokenizer, one word at a time: no piece of this vocabulary holds the
   * word separator except at its start, so the pieces of a text are exactly its words' pieces.
   */
  private pieces(word: string): number[] {
    const hit = this.words.get(word);
    if (hit) return hit;
    const ids = this.tokenizer!.encode(word);
    if (this.words.size >= WORD_CACHE) this.words.delete(this.words.keys().next().value!);
    this.words.set(word, ids);
    return ids;
  }

  private async load(): Promise<StaticTable> {
    const started = performance.now();
    const model = installedModel();
    this.tokenizer = new PieceTokenizer(model.vocabulary);
    const key = tableKey(model, this.recipe);
    const path = tablePath(this.options.cacheDir ?? defaultCacheDir(), key);
    let table = readTable(path, key);
    const built = table === null;
    if (!table) {
      if (!this.options.teacher) throw new MemgateError('internal', `static embedder: no cached table at ${path} and no teacher model to build one`, { retryable: false });
      const teacher = this.options.teacher();
      try {
        table = await distilTable(model, teacher.embed, this.recipe, key);
      } finally {
        await teacher.close?.();
      }
      try {
        writeTable(path, table);
      } catch (err) {
        this.options.onCacheError?.(err);
      }
    }
    if (table.dimensions !== this.dimensions || table.rows.length !== model.vocabulary.length * table.dimensions) {
      throw new MemgateError('internal', `static embedder: table ${path} has ${table.dimensions} dimensions, expected ${this.dimensions}`);
    }
    this.table = table;
    this.options.onReady?.({ path, built, ms: performance.now() - started, dimensions: table.dimensions });
    return table;
  }
}
