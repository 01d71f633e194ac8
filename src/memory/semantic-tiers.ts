import type { ExtractionSchema, FieldDef } from '../core/extraction-schema.ts';
import type { Turn } from '../core/types.ts';
import type { CosineScale, Embedder } from '../ports/embedder.ts';
import { LruMap } from './lru-map.ts';

/** Tuning of the vectors the fact and recent tiers match by meaning. */
export interface SemanticTiersOptions {
  /**
   * Most recent turns embedded per search (default 32): the last few minutes of talk, all the
   * kept turns (at most 8 by default) and the buffered ones since. Older buffered turns are
   * matched by their words.
   */
  maxTurns?: number;
  /** Turn vectors kept, by text, across users (default 4,096: ~15 MiB of fused 896-d vectors). */
  turnCacheSize?: number;
  /** Field vectors kept, by field text (default 512: dozens of schemas). */
  fieldCacheSize?: number;
  /**
   * Texts per encoder call (default 2: ~15-25 ms of the fused encoder here). Calls go one after
   * another, so another search's query waits behind one small call at most, never behind a
   * whole buffer (the encoder merges what is queued into its next call).
   */
  chunk?: number;
}

/** What a search matches by meaning: field vectors by field name, turn vectors by turn id (those that came in time). */
export interface SemanticVectors {
  scale: CosineScale;
  fields: Map<string, Float32Array>;
  turns: Map<string, Float32Array>;
}

/** Which cache a text's vector goes to. */
export type VectorKind = 'turn' | 'field';

/** A text whose vector goes to the `kind` cache. */
export type VectorText = { kind: VectorKind; text: string };

/** A text to embed, the slot waiting for its vector. */
type Missing = VectorText & { slot: Deferred<Float32Array> };

/**
 * The vectors that let the fact and recent tiers match what the caller meant, not only the
 * words: each schema field as a text (its name's words, description and hints), each kept or
 * buffered turn. Cached by text: a field is embedded once per schema text, a turn once while it
 * stays in the cache. Filled off the call path by the warm queue (meaning-warmer.ts: turns as
 * they are appended, fields when a schema is read or put), and at search time for what is not
 * cached yet, waiting for it at most the search's `waitMs`. Vectors in flight are shared:
 * a search waits for a turn the warm queue or another search is embedding, never embeds it twice.
 */
export class SemanticTiers {
  private readonly maxTurns: number;
  private readonly chunk: number;
  private readonly caches: Record<VectorKind, LruMap<string, Promise<Float32Array>>>;
  /** Takes what a search's wait left unembedded (the warm queue); null: nobody, the next search embeds it within its own wait. */
  private leftovers: ((texts: VectorText[]) => void) | null = null;

  private constructor(
    private readonly embedder: Embedder,
    readonly scale: CosineScale,
    options: SemanticTiersOptions,
  ) {
    this.maxTurns = options.maxTurns ?? 32;
    this.chunk = Math.max(1, options.chunk ?? 2);
    this.caches = { turn: new LruMap(options.turnCacheSize ?? 4096), field: new LruMap(options.fieldCacheSize ?? 512) };
  }

  /**
   * The tiers for this embedder, or null when its cosine does not measure meaning (hashing: a
   * high cosine is shared words, which the lexical scores already count, so the tiers keep them).
   */
  static for(embedder: Embedder, options: SemanticTiersOptions = {}): SemanticTiers | null {
    const scale = embedder.cosineScale;
    return scale?.meaning ? new SemanticTiers(embedder, scale, options) : null;
  }

  /**
   * Vectors of the schema's fields and of the `maxTurns` most recent of `turns`: the cached ones
   * at once, the rest embedded now (fields first, then turns newest first, `chunk` texts a call)
   * and included if they come within `waitMs`. Past it the search goes on without them (those
   * fields and turns are matched by words) while the embedding goes on filling the cache for
   * the next search: the chunk in flight, then the warm queue under its budget (without one,
   * the next search). A failed embedding leaves its texts out (words again) and is not cached.
   */
  async vectors(schema: ExtractionSchema, turns: readonly Turn[], waitMs = Infinity): Promise<SemanticVectors> {
    const recent = newest(turns, this.maxTurns);
    const fields = new Map<string, Float32Array>();
    const turnVectors = new Map<string, Float32Array>();
    const missing: Missing[] = [];
    const arrivals: Array<Promise<unknown>> = [];
    const collect = <K>(vector: Promise<Float32Array>, into: Map<K, Float32Array>, key: K) =>
      arrivals.push(
        vector.then(
          (v) => into.set(key, v),
          () => undefined,
        ),
      );
    for (const f of schema.fields) collect(this.lookup('field', fieldText(f), missing), fields, f.name);
    for (const t of recent) collect(this.lookup('turn', t.text, missing), turnVectors, t.turnId);
    const waiting = { over: false };
    if (missing.length > 0) void this.embedInChunks(missing, waiting);
    // Cached vectors are settled promises: they arrive in microtasks, before even a 0 ms timer.
    await settledWithin(Promise.all(arrivals), waitMs);
    waiting.over = true;
    // Copies: vectors that arrive later go to the cache, not into a reply already being scored.
    return { scale: this.scale, fields: new Map(fields), turns: new Map(turnVectors) };
  }

  /**
   * Hand what a search had no time to wait for to `take` (the warm queue), to be embedded under
   * its budget. A search's chain never goes on past its wait (but for the chunk in flight): it
   * would hold the encoder for every query meanwhile, unbudgeted (measured: the next search took
   * 130-230 ms instead of ~70 with a 40 ms wait). Without a queue the rest waits for the next
   * search, which embeds the newest of what is missing within its own wait.
   */
  handLeftoversTo(take: (texts: VectorText[]) => void): void {
    this.leftovers = take;
  }

  /** Whether a text's vector is cached or being embedded (the warm queue skips it). */
  has(kind: VectorKind, text: string): boolean {
    return this.caches[kind].has(text);
  }

  /**
   * Embed the texts not cached nor in flight, into their caches (the warm queue). Resolves once
   * they are, to how many it embedded: 0 when there was nothing to do (no encoder time spent).
   */
  async warm(items: readonly VectorText[]): Promise<number> {
    const missing: Missing[] = [];
    for (const { kind, text } of items) if (text.trim() !== '' && !this.has(kind, text)) void this.lookup(kind, text, missing).catch(() => undefined);
    await this.embedInChunks(missing);
    return missing.length;
  }

  /** The cached (or in-flight) vector of a text, or a new slot for it, listed in `missing`. */
  private lookup(kind: VectorKind, text: string, missing: Missing[]): Promise<Float32Array> {
    const cache = this.caches[kind];
    const hit = cache.get(text);
    if (hit) return hit;
    const slot = new Deferred<Float32Array>();
    cache.set(text, slot.promise);
    // A failed embedding is not remembered: the next search or warm-up tries again.
    slot.promise.catch(() => {
      if (cache.get(text) === slot.promise) cache.delete(text);
    });
    missing.push({ kind, text, slot });
    return slot.promise;
  }

  /**
   * One encoder call per `chunk` texts, each after the previous: a failed call fails its own
   * texts only. Once the search stopped waiting (`waiting.over`), the rest goes to `leftovers`.
   */
  private async embedInChunks(missing: readonly Missing[], waiting?: { over: boolean }): Promise<void> {
    for (let i = 0; i < missing.length; i += this.chunk) {
      if (waiting?.over) return this.handOver(missing.slice(i));
      const part = missing.slice(i, i + this.chunk);
      try {
        const vs = await this.embedder.embed(part.map((m) => m.text));
        part.forEach((m, j) => m.slot.settle(vs[j]));
      } catch (err) {
        for (const m of part) m.slot.fail(err);
      }
    }
  }

  /** Free the texts' slots (a search still waiting on one matches it by words) and queue them, most wanted last: the queue takes the newest first. */
  private handOver(rest: readonly Missing[]): void {
    for (const m of rest) {
      const cache = this.caches[m.kind];
      if (cache.get(m.text) === m.slot.promise) cache.delete(m.text);
      m.slot.fail(new Error('left to the warm queue'));
    }
    this.leftovers?.(rest.map(({ kind, text }) => ({ kind, text })).reverse());
  }
}

/** Settles when `p` does or after `ms`, whichever is first (Infinity: when `p` does). */
async function settledWithin(p: Promise<unknown>, ms: number): Promise<void> {
  if (ms === Infinity) {
    await p;
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, ms));
  });
  try {
    await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The texts of a schema's fields, as they are cached (what the warm queue embeds when a schema is read or put). */
export function fieldTexts(schema: ExtractionSchema): string[] {
  return schema.fields.map(fieldText);
}

/** What a field is about, in words a sentence encoder reads: its name's words, its description and its hints. */
export function fieldText(f: FieldDef): string {
  const hints = f.hints && f.hints.length > 0 ? ` (${f.hints.join(', ')})` : '';
  return `${f.name.replace(/_/g, ' ')}: ${f.description}${hints}`;
}

/** The `n` most recently said turns with something to embed, one per turn id. */
function newest(turns: readonly Turn[], n: number): Turn[] {
  const byId = new Map<string, Turn>();
  for (const t of turns) if (t.text.trim() !== '') byId.set(t.turnId, t);
  return [...byId.values()].sort((a, b) => b.ts - a.ts || b.seq - a.seq).slice(0, n);
}

/** A promise settled from outside: one embed call answers the slots of every text it carried. */
class Deferred<T> {
  readonly promise: Promise<T>;
  settle!: (value: T | undefined) => void;
  fail!: (err: unknown) => void;
  constructor() {
    this.promise = new Promise<T>((resolve, reject) => {
      this.settle = (v) => (v === undefined ? reject(new Error('embedder returned fewer vectors than texts')) : resolve(v));
      this.fail = reject;
    });
  }
}
