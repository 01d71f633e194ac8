import type { ExtractionSchema, FieldDef } from '../core/extraction-schema.ts';
import type { Turn } from '../core/types.ts';
import type { CosineScale, Embedder } from '../ports/embedder.ts';
import { LruMap } from './lru-map.ts';

/** Tuning of the vectors the fact and recent tiers match by meaning. */
export interface SemanticTiersOptions {
  /**
   * Most recent turns embedded per search (default 32): the last few minutes of talk, all the
   * kept turns (at most 8 by default) and the buffered ones since. The encoder costs ~6 ms per
   * turn here, so a first search over a long buffer waits ~0.2 s at most (less with a
   * `deadlineMs`: see the cascade); later searches embed only what was said since. Older
   * buffered turns are matched by their words.
   */
  maxTurns?: number;
  /** Turn vectors kept, by text, across users (default 4,096: ~15 MiB of fused 896-d vectors). */
  turnCacheSize?: number;
  /** Field vectors kept, by field text (default 512: dozens of schemas). */
  fieldCacheSize?: number;
}

/** What a search matches by meaning: field vectors by field name, turn vectors by turn id. */
export interface SemanticVectors {
  scale: CosineScale;
  fields: Map<string, Float32Array>;
  turns: Map<string, Float32Array>;
}

/**
 * The vectors that let the fact and recent tiers match what the caller meant, not only the
 * words: each schema field as a text (its name's words, description and hints), each kept or
 * buffered turn. Computed at search time, never on append or start (the call path stays free of
 * embedding), and cached by text: a field is embedded once per schema text, a turn once while
 * it stays in the cache, so a repeated search embeds only what was said since. Vectors in
 * flight are shared: concurrent searches of one user do not embed a turn twice.
 */
export class SemanticTiers {
  private readonly maxTurns: number;
  private readonly turnCache: LruMap<string, Promise<Float32Array>>;
  private readonly fieldCache: LruMap<string, Promise<Float32Array>>;

  private constructor(
    private readonly embedder: Embedder,
    readonly scale: CosineScale,
    options: SemanticTiersOptions,
  ) {
    this.maxTurns = options.maxTurns ?? 32;
    this.turnCache = new LruMap(options.turnCacheSize ?? 4096);
    this.fieldCache = new LruMap(options.fieldCacheSize ?? 512);
  }

  /**
   * The tiers for this embedder, or null when its cosine does not measure meaning (hashing: a
   * high cosine is shared words, which the lexical scores already count, so the tiers keep them).
   */
  static for(embedder: Embedder, options: SemanticTiersOptions = {}): SemanticTiers | null {
    const scale = embedder.cosineScale;
    return scale?.meaning ? new SemanticTiers(embedder, scale, options) : null;
  }

  /** Vectors of the schema's fields and of the `maxTurns` most recent of `turns`, embedding what is not cached in one call. */
  async vectors(schema: ExtractionSchema, turns: readonly Turn[]): Promise<SemanticVectors> {
    const recent = newest(turns, this.maxTurns);
    const missing: string[] = [];
    const pending = new Map<string, Deferred<Float32Array>>();
    const lookup = (cache: LruMap<string, Promise<Float32Array>>, text: string): Promise<Float32Array> => {
      const hit = cache.get(text) ?? pending.get(text)?.promise;
      if (hit) return hit;
      missing.push(text);
      const slot = new Deferred<Float32Array>();
      cache.set(text, slot.promise);
      // A failed embedding is not remembered: the next search tries again.
      slot.promise.catch(() => cache.delete(text));
      pending.set(text, slot);
      return slot.promise;
    };
    const fieldVs = schema.fields.map((f) => lookup(this.fieldCache, fieldText(f)));
    const turnVs = recent.map((t) => lookup(this.turnCache, t.text));
    if (missing.length > 0) {
      this.embedder.embed(missing).then(
        (vs) => missing.forEach((text, i) => pending.get(text)!.settle(vs[i])),
        (err: unknown) => pending.forEach((slot) => slot.fail(err)),
      );
    }
    const [fields, turnVectors] = await Promise.all([Promise.all(fieldVs), Promise.all(turnVs)]);
    return {
      scale: this.scale,
      fields: new Map(schema.fields.map((f, i) => [f.name, fields[i]!])),
      turns: new Map(recent.map((t, i) => [t.turnId, turnVectors[i]!])),
    };
  }
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
