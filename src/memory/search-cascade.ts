import { iso } from '../core/clock.ts';
import type { Confidence, Scope, SearchResult } from '../core/types.ts';
import type { AcuHit, AcuIndex } from '../ports/acu-index.ts';
import type { ColdArchive, ColdHit } from '../ports/cold-archive.ts';
import type { Embedder } from '../ports/embedder.ts';
import { reciprocalRankFusion } from './rrf.ts';

/** Ports the cascade reads; `now` measures the latency budget (a clock that moves: timers race the tiers in real time). */
export interface CascadeDeps {
  acus: AcuIndex;
  cold: ColdArchive;
  embedder: Embedder;
  now: () => number;
}

/** Per-call knobs (config `memory.*` plus the request's `k` and `deadlineMs`). */
export interface CascadeOptions {
  k: number;
  /** Latency budget in ms: a tier that would overrun it is abandoned and the reply is partial. */
  deadlineMs?: number;
  hybrid: boolean;
  rrfK: number;
  confidenceThreshold: number;
}

/** Ranked results, best first; `partial` when the budget cut a tier. */
export interface CascadeReply {
  results: SearchResult[];
  partial: boolean;
}

/** Most the RRF bonus adds to a cosine: enough to break near-ties, too little to invent relevance. */
export const RRF_BONUS = 0.05;
/** Cold scores are scaled below the lowest ACU score (and the threshold) by this factor. */
export const COLD_SCALE = 0.9;
/** Candidates fetched per leg, as a multiple of k: RRF and cold deduplication need depth. */
const CANDIDATE_FACTOR = 3;

/**
 * memory_search (DESIGN.md §1, paper §7.2): vector search over the user's ACUs;
 * with `hybrid` and a BM25-capable index, a keyword leg (started in parallel) fused
 * by RRF; then, when fewer than k results or the best is below the confidence
 * threshold, a keyword scan of cold raw turns. Scores are 0..1: cosine plus a small
 * RRF bonus, non-increasing along the RRF order; every cold score is strictly below
 * every ACU score of the reply and below the threshold. When low confidence triggers
 * the fallback, up to ⌊k/2⌋ slots go to cold turns so the fallback can be seen.
 */
export async function searchCascade(deps: CascadeDeps, scope: Scope, query: string, opts: CascadeOptions): Promise<CascadeReply> {
  const k = Math.floor(opts.k);
  if (k < 1 || query.trim().length === 0) return { results: [], partial: false };
  const started = deps.now();
  const remaining = (): number => (opts.deadlineMs === undefined ? Infinity : opts.deadlineMs - (deps.now() - started));
  const depth = k * CANDIDATE_FACTOR;

  const vectorLeg = (async () => {
    const [vector] = await deps.embedder.embed([query]);
    if (!vector) return { vector: new Float32Array(0), hits: [] as AcuHit[] };
    return { vector, hits: await deps.acus.search(scope, vector, depth) };
  })();
  const useKeywords = opts.hybrid && deps.acus.capabilities.bm25;
  const keywordLeg = useKeywords ? deps.acus.keywordSearch(scope, query, depth) : Promise.resolve([]);
  // If the vector leg fails or times out nobody awaits this one: keep its rejection handled.
  keywordLeg.catch(() => undefined);

  const vec = await within(vectorLeg, remaining());
  if (vec === TIMED_OUT) return { results: [], partial: true };
  let partial = false;
  let keywordHits = await within(keywordLeg, remaining());
  if (keywordHits === TIMED_OUT) {
    partial = true;
    keywordHits = [];
  }
  const acuResults = fuse(vec.vector, vec.hits, keywordHits, useKeywords, opts).filter((r) => r.score > 0);

  const best = acuResults[0]?.score ?? 0;
  const lowConfidence = best < opts.confidenceThreshold;
  if (acuResults.length >= k && !lowConfidence) return { results: acuResults.slice(0, k), partial };
  if (remaining() <= 0) return { results: acuResults.slice(0, k), partial: true };

  const coldHits = await within(deps.cold.search(scope, query, depth), remaining());
  if (coldHits === TIMED_OUT) return { results: acuResults.slice(0, k), partial: true };

  const covered = new Set(acuResults.slice(0, k).flatMap((r) => r.turnRefs));
  const fresh = coldHits.filter((h) => !covered.has(h.turn.turnId));
  const coldSlots = Math.min(fresh.length, Math.max(k - acuResults.length, lowConfidence ? Math.floor(k / 2) : 0));
  const kept = acuResults.slice(0, k - coldSlots);
  const lowest = kept.at(-1)?.score ?? opts.confidenceThreshold;
  const base = Math.min(lowest, opts.confidenceThreshold);
  const cold = fresh.slice(0, coldSlots).map((h, i) => coldResult(h, base * COLD_SCALE * (1 - i / (coldSlots + 1))));
  return { results: [...kept, ...cold], partial };
}

/** Confidence label of a score: high ≥ max(0.6, threshold + 0.2), medium ≥ threshold, low otherwise. */
export function confidenceOf(score: number, threshold: number): Confidence {
  if (score >= Math.max(0.6, threshold + 0.2)) return 'high';
  return score >= threshold ? 'medium' : 'low';
}

/** Cosine similarity; the embedder promises unit vectors, but stored ones may come from elsewhere. */
export function cosine(a: Float32Array, b: Float32Array): number {
  const n = Math.min(a.length, b.length);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < n; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

function fuse(vector: Float32Array, vectorHits: AcuHit[], keywordHits: AcuHit[], hybrid: boolean, opts: CascadeOptions): SearchResult[] {
  if (!hybrid) return vectorHits.map((h) => ranked(h, clamp01(h.score), 'acu', opts));
  const cosOf = new Map(vectorHits.map((h) => [h.acu.id, h.score]));
  const fused = reciprocalRankFusion([vectorHits, keywordHits], (h) => h.acu.id, opts.rrfK);
  const maxRrf = 2 / (opts.rrfK + 1);
  let ceiling = 1;
  return fused.map((f) => {
    const cos = cosOf.get(f.item.acu.id) ?? cosine(vector, f.item.acu.embedding);
    // Cap by the previous score so rank and score never disagree.
    ceiling = Math.min(ceiling, clamp01(cos + RRF_BONUS * (f.score / maxRrf)));
    return ranked(f.item, ceiling, f.ranks[1] === 0 ? 'acu' : 'hybrid', opts);
  });
}

function ranked(h: AcuHit, score: number, source: 'acu' | 'hybrid', opts: CascadeOptions): SearchResult {
  return { text: h.acu.text, score, confidence: confidenceOf(score, opts.confidenceThreshold), source, turnRefs: [...h.acu.turnRefs], validAt: h.acu.validAt };
}

function coldResult(h: ColdHit, score: number): SearchResult {
  const t = h.turn;
  const who = t.speaker ? `${t.speaker} (${t.role})` : t.role;
  return { text: `${who} on ${iso(t.ts).slice(0, 10)}: ${t.text}`, score, confidence: 'low', source: 'cold', turnRefs: [t.turnId], validAt: iso(t.ts) };
}

const TIMED_OUT = Symbol('timed-out');

/**
 * Settles with the promise, or TIMED_OUT after `ms` (a spent budget still lets an
 * already-settled promise win: microtasks run before the 0 ms timer). The abandoned
 * promise's rejection is swallowed.
 */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  if (ms === Infinity) return promise;
  promise.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function clamp01(x: number): number {
  return x < 0 ? 0 : x > 1 ? 1 : x;
}
