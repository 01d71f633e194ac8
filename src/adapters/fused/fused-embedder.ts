import { MemgateError } from '../../core/errors.ts';
import type { CosineScale, Embedder } from '../../ports/embedder.ts';

/** One embedder of a fusion and its share of the fused cosine. */
export interface FusedPart {
  embedder: Embedder;
  /** Relative weight (> 0); the shares are the weights over their sum. */
  weight: number;
  /** A model that costs far more than the rest (the sentence encoder): left out of `embedLexical`. */
  costly?: boolean;
  /** What this part reads of each text (default: all of it), e.g. the encoder without dates and role tags. */
  view?: (text: string) => string;
}

/**
 * Several embedders as one: each part's unit vector scaled by sqrt(share) and
 * concatenated. The result is unit length and its cosine is exactly the
 * share-weighted mean of the parts' cosines, so one dot product (one index,
 * one dedup threshold) scores both lexical overlap (the hashing embedder: names,
 * numbers, dates, rare words) and meaning (a sentence encoder: paraphrases).
 * `dimensions` is the sum of the parts'.
 */
export class FusedEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly cosineScale?: CosineScale;
  private readonly scales: number[];
  /** Scales of `embedLexical`: the cheap parts' shares renormalised among themselves, 0 for costly parts; null when every part is costly. */
  private readonly lexicalScales: number[] | null;

  constructor(private readonly parts: readonly FusedPart[]) {
    if (parts.length < 2) throw new MemgateError('bad_request', 'a fused embedder needs at least two parts');
    for (const p of parts) {
      if (!(p.weight > 0) || !Number.isFinite(p.weight)) throw new MemgateError('bad_request', `fused embedder weights must be positive, got ${p.weight} for ${p.embedder.id}`);
    }
    const total = parts.reduce((s, p) => s + p.weight, 0);
    this.scales = parts.map((p) => Math.sqrt(p.weight / total));
    const cheap = parts.reduce((s, p) => s + (p.costly ? 0 : p.weight), 0);
    this.lexicalScales = cheap > 0 && parts.some((p) => p.costly) ? parts.map((p) => (p.costly ? 0 : Math.sqrt(p.weight / cheap))) : null;
    this.dimensions = parts.reduce((s, p) => s + p.embedder.dimensions, 0);
    this.id = `fused(${parts.map((p) => `${p.embedder.id}*${round3(p.weight / total)}`).join('+')})`;
    const scale = mixedScale(parts.map((p) => [p.embedder.cosineScale, p.weight / total]));
    if (scale) this.cosineScale = scale;
  }

  /** Load every model-backed part now. */
  async warm(): Promise<void> {
    await Promise.all(this.parts.map((p) => p.embedder.warm?.()));
  }

  /** The parts run concurrently; one fused unit vector per text, in order. */
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const perPart = await Promise.all(this.parts.map((p) => p.embedder.embed(p.view ? texts.map(p.view) : texts)));
    return texts.map((_, i) => this.fuse(perPart.map((vs) => vs[i]!)));
  }

  /**
   * The cheap parts only, the costly ones' coordinates left at zero, unit length (the cheap
   * shares renormalised): its cosine with a full vector is the cheap parts' cosine scaled by
   * sqrt of their share, so such a vector ranks below an equally relevant full one, never
   * above it. Without a costly part it is `embed`.
   */
  get embedLexical(): ((texts: readonly string[]) => Promise<Float32Array[]>) | undefined {
    const scales = this.lexicalScales;
    if (!scales) return undefined;
    return async (texts) => {
      const perPart = await Promise.all(this.parts.map((p) => (p.costly ? null : p.embedder.embed(p.view ? texts.map(p.view) : texts))));
      const zero = (j: number) => new Float32Array(this.parts[j]!.embedder.dimensions);
      return texts.map((_, i) =>
        this.combine(
          perPart.map((vs, j) => vs?.[i] ?? zero(j)),
          scales,
        ),
      );
    };
  }

  /** Fuse one vector of each part (in part order) as `embed` does: lets a caller reuse vectors it already has. */
  fuse(vectors: readonly Float32Array[]): Float32Array {
    return this.combine(vectors, this.scales);
  }

  private combine(vectors: readonly Float32Array[], scales: readonly number[]): Float32Array {
    if (vectors.length !== this.parts.length) throw new MemgateError('internal', `fused embedder: expected ${this.parts.length} vectors, got ${vectors.length}`);
    const out = new Float32Array(this.dimensions);
    let offset = 0;
    vectors.forEach((v, j) => {
      const part = this.parts[j]!;
      if (v.length !== part.embedder.dimensions) throw new MemgateError('internal', `fused embedder: ${part.embedder.id} gave ${v.length} dimensions, expected ${part.embedder.dimensions}`);
      const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
      const scale = scales[j]! / norm;
      for (let i = 0; i < v.length; i++) out[offset + i] = v[i]! * scale;
      offset += v.length;
    });
    return out;
  }
}

/**
 * The fusion's cosine is the share-weighted mean of its parts', so its scale is taken as the
 * share-weighted mean of theirs: known only when every part's is, meaning when any part's is.
 * Conservative for the default (hashing 0.35 + USE-lite 0.65): derived floor 0.27 / strong 0.43,
 * measured on the fused vectors themselves 0.24 / 0.41 (scripts/calibrate-semantic-tiers.ts).
 */
function mixedScale(parts: ReadonlyArray<readonly [CosineScale | undefined, number]>): CosineScale | undefined {
  if (parts.some(([s]) => !s)) return undefined;
  const mix = (pick: (s: CosineScale) => number) => round3(parts.reduce((sum, [s, share]) => sum + pick(s!) * share, 0));
  return { meaning: parts.some(([s]) => s!.meaning), floor: mix((s) => s.floor), strong: mix((s) => s.strong) };
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
