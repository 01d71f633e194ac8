import { MemgateError } from '../../core/errors.ts';
import type { CosineScale, Embedder } from '../../ports/embedder.ts';
import { features } from './text-features.ts';

/** Options of the offline embedder. */
export interface OfflineEmbedderOptions {
  /** Vector length (default 384, the size of common small sentence models). */
  dimensions?: number;
}

/** 32-bit FNV-1a with a seed folded into the offset basis, then murmur3's finaliser to spread the bits. */
function hash32(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const INDEX_SEED = 0x9e3779b9;
const SIGN_SEED = 0x2545f491;
const PROBES = 2;

/**
 * Deterministic, network-free text embedder: signed feature hashing of canonical stemmed words,
 * word bigrams and character trigrams, with binary term frequency and L2 normalisation.
 * It has no notion of meaning beyond shared words, stems, a small synonym map and spelling
 * overlap; it exists so the embedded default runs offline and reproducibly.
 */
export class OfflineEmbedder implements Embedder {
  readonly id = 'offline-hash-v1';
  readonly dimensions: number;
  /** Word overlap, not meaning (measured at 384 dimensions by scripts/calibrate-semantic-tiers.ts). */
  readonly cosineScale: CosineScale = { meaning: false, floor: 0.16, strong: 0.36 };

  constructor(options: OfflineEmbedderOptions = {}) {
    const dims = options.dimensions ?? 384;
    if (!Number.isInteger(dims) || dims < 8) throw new MemgateError('bad_request', `offline embedder dimensions must be an integer >= 8, got ${dims}`);
    this.dimensions = dims;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }

  /** Synchronous form of `embed` for one text (tests, benchmarks, in-process indexes). */
  embedOne(text: string): Float32Array {
    // Binary term frequency: a feature counts once, at its highest weight in the text. An ACU
    // is one sentence, and what repeats in it is mostly its subject's name (every "I", "my" and
    // "we" rewritten to it): counting repeats made name-heavy facts look alike and drowned what
    // a fact is about.
    const weights = new Map<string, number>();
    for (const f of features(text)) weights.set(f.key, Math.max(f.weight, weights.get(f.key) ?? 0));
    // An empty or all-stopword text still gets a unit vector: a zero vector has no cosine.
    if (weights.size === 0) weights.set('u:__empty__', 1);
    const v = new Float32Array(this.dimensions);
    for (const [key, weight] of weights) {
      // Each feature lands in PROBES signed slots: a single hash collision then moves a cosine
      // by half as much, which matters at 384 dimensions with ~50 features per text.
      const w = weight / Math.sqrt(PROBES);
      for (let p = 0; p < PROBES; p++) {
        const h = hash32(key, INDEX_SEED + p * 0x68e31da4);
        const idx = h % this.dimensions;
        const sign = hash32(key, SIGN_SEED + p * 0x1b873593) & 1 ? 1 : -1;
        v[idx] = (v[idx] as number) + sign * w;
      }
    }
    let norm = 0;
    for (let i = 0; i < v.length; i++) norm += (v[i] as number) ** 2;
    norm = Math.sqrt(norm);
    if (norm === 0) {
      // Every feature cancelled out by hash collisions: fall back to a fixed unit vector.
      v[hash32(text, INDEX_SEED) % this.dimensions] = 1;
      return v;
    }
    for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / norm;
    return v;
  }
}
