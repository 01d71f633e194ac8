import { turnDefect } from '../core/turn-check.ts';
import { iso } from '../core/clock.ts';
import { speakerLabel } from '../core/speaker.ts';
import type { ExtractionSchema } from '../core/extraction-schema.ts';
import type { Confidence, HotDocument, Scope, SearchResult, Turn } from '../core/types.ts';
import type { AcuHit, AcuIndex } from '../ports/acu-index.ts';
import type { ColdArchive, ColdHit } from '../ports/cold-archive.ts';
import type { Embedder } from '../ports/embedder.ts';
import { factState } from './fact-state.ts';
import { factResults, recentResults } from './fact-search.ts';
import { fieldsByMeaning, recentByMeaning } from './semantic-match.ts';
import type { SemanticTiers } from './semantic-tiers.ts';
import { cosine } from './cosine.ts';
import { diversify } from './mmr.ts';
import { reciprocalRankFusion } from './rrf.ts';
import { markOutdated, rankTiers } from './search-ranking.ts';
import { inSpan } from '../core/tracing.ts';

/** What the fact and recent tiers read: the hot document, the buffered turns and the agent's schema. */
export interface MemoryReads {
  hot(scope: Scope): Promise<HotDocument | null>;
  buffered(scope: Scope): Promise<Turn[]>;
  schema(scope: Scope): Promise<ExtractionSchema>;
}

/**
 * Ports the cascade reads; `now` measures the latency budget (a clock that moves: timers race
 * the tiers in real time); `clock` is system time (epoch ms) for what has expired.
 */
export interface CascadeDeps {
  acus: AcuIndex;
  cold: ColdArchive;
  embedder: Embedder;
  now: () => number;
  /** The fact and recent tiers; without it the cascade searches ACUs and cold turns only. */
  memory?: MemoryReads;
  clock?: () => number;
  /** Match the fact and recent tiers by meaning too (SemanticTiers.for: null for a hashing embedder); without it they match by words. */
  semantic?: SemanticTiers | null;
}

/** Per-call knobs (config `memory.*` plus the request's `k` and `deadlineMs`). */
export interface CascadeOptions {
  k: number;
  /** Latency budget in ms: a tier that would overrun it is abandoned and the reply is partial. */
  deadlineMs?: number;
  hybrid: boolean;
  rrfK: number;
  confidenceThreshold: number;
  /** World time (epoch ms): search the memory as it stood then (facts valid then, nothing said after). */
  asOf?: number;
  /** Most ms to wait for field and turn vectors not cached yet (config `memory.meaningWaitMs`; default: no cap but the deadline's). */
  meaningWaitMs?: number;
  /** λ of maximal marginal relevance over the ACU results (config `memory.mmrLambda`; default 1: relevance order). */
  mmrLambda?: number;
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
 * memory_search (docs/design.md §1, docs/protocol.md): every tier raced against the budget. The fact and
 * recent tiers read the hot document and the buffer (structured facts, kept and buffered turns);
 * the ACU tier runs vector search, with `hybrid` and a BM25-capable index a keyword leg fused by
 * RRF; then, when fewer than k results or the best is below the confidence threshold, a keyword
 * scan of cold raw turns. Results stating superseded values carry `outdated` and rank below the
 * current fact of their key; every cold score is strictly below every other score of the reply
 * and below the threshold. When low confidence triggers the fallback, up to ⌊k/2⌋ slots go to
 * cold turns so the fallback can be seen. `asOf` keeps facts valid then and nothing said after.
 */
export async function searchCascade(deps: CascadeDeps, scope: Scope, query: string, opts: CascadeOptions): Promise<CascadeReply> {
  const k = Math.floor(opts.k);
  if (k < 1 || query.trim().length === 0) return { results: [], partial: false };
  const started = deps.now();
  const remaining = (): number => (opts.deadlineMs === undefined ? Infinity : opts.deadlineMs - (deps.now() - started));
  const asOf = opts.asOf;
  // Past-time filtering drops candidates after the fact: fetch deeper.
  const depth = k * CANDIDATE_FACTOR * (asOf === undefined ? 1 : 3);
  const said = <T>(items: T[], at: (x: T) => number): T[] => (asOf === undefined ? items : items.filter((x) => at(x) <= asOf));

  // One span per tier raced (a no-op unless the host registered an OpenTelemetry SDK).
  const memoryLeg = deps.memory ? inSpan('memgate.search.tier', { 'memgate.tier': 'memory' }, () => readMemory(deps.memory!, scope)) : Promise.resolve(null);
  memoryLeg.catch(() => undefined);
  const turnsOf = (m: MemoryRead): Turn[] => said([...(m.doc?.recent ?? []).filter((t) => turnDefect(t) === null), ...m.buffered], (t) => t.ts);
  const vectorLeg = inSpan('memgate.search.tier', { 'memgate.tier': 'acu.vector' }, async (span) => {
    const [vector] = await deps.embedder.embed([query]);
    if (!vector) return { vector: new Float32Array(0), hits: [] as AcuHit[] };
    const hits = await deps.acus.search(scope, vector, depth);
    span.setAttribute('gen_ai.memory.record.count', hits.length);
    return { vector, hits };
  });
  vectorLeg.catch(() => undefined);
  const useKeywords = opts.hybrid && deps.acus.capabilities.bm25;
  const keywordLeg = useKeywords ? inSpan('memgate.search.tier', { 'memgate.tier': 'acu.keyword' }, () => deps.acus.keywordSearch(scope, query, depth)) : Promise.resolve([]);
  // If the vector leg fails or times out nobody awaits this one: keep its rejection handled.
  keywordLeg.catch(() => undefined);

  let partial = false;
  const memory = await within(memoryLeg, remaining());
  if (memory === TIMED_OUT) partial = true;
  const mem = memory === TIMED_OUT ? null : memory;
  const clockNow = deps.clock?.() ?? Date.now();
  const state = mem?.doc ? factState(mem.doc.entities, clockNow) : null;
  const tierClock = asOf === undefined ? { now: clockNow } : { now: clockNow, asOf };

  let acuResults: SearchResult[] = [];
  const vec = await within(vectorLeg, remaining());
  // The query's vector is the ACU leg's: the fact and recent tiers never embed the query again.
  const queryVector = vec !== TIMED_OUT && vec.vector.length > 0 ? vec.vector : null;
  const turns = mem ? turnsOf(mem) : [];
  // Field and turn vectors: cached (warmed as turns were appended), so mostly lookups. What is
  // not is embedded only now, after the query: in one encoder call with it, the query's vector
  // would wait for the whole buffer. The wait is capped (`meaningWaitMs`, and at most half the
  // budget left, so the keyword leg and the cold tier keep theirs): past it those fields and
  // turns are matched by words, and the reply is not partial: every tier answered.
  const semantic = deps.semantic;
  const wait = Math.min(opts.meaningWaitMs ?? Infinity, remaining() / 2);
  const meaning = semantic && mem && queryVector ? await inSpan('memgate.search.tier', { 'memgate.tier': 'meaning' }, () => semantic.vectors(mem.schema, turns, wait)) : null;
  const facts = mem ? factResults(mem.doc, mem.schema, query, tierClock, meaning && queryVector ? fieldsByMeaning(queryVector, meaning) : undefined) : [];
  const recent = mem ? (meaning && queryVector ? recentByMeaning(turns, query, queryVector, meaning, tierClock) : recentResults(turns, query, tierClock)) : [];
  if (vec === TIMED_OUT) partial = true;
  else {
    let keywordHits = await within(keywordLeg, remaining());
    if (keywordHits === TIMED_OUT) {
      partial = true;
      keywordHits = [];
    }
    acuResults = said(fuse(vec.vector, vec.hits, keywordHits, useKeywords, opts), (r) => Date.parse(r.validAt)).filter((r) => r.score > 0);
  }
  const ranked = rankTiers({ facts, recent, acus: acuResults }, state, asOf);

  const best = ranked[0]?.score ?? 0;
  const lowConfidence = best < opts.confidenceThreshold;
  if ((ranked.length >= k && !lowConfidence) || vec === TIMED_OUT) return { results: ranked.slice(0, k), partial };
  if (remaining() <= 0) return { results: ranked.slice(0, k), partial: true };

  const coldHits = await within(
    inSpan('memgate.search.tier', { 'memgate.tier': 'cold' }, () => deps.cold.search(scope, query, depth)),
    remaining(),
  );
  if (coldHits === TIMED_OUT) return { results: ranked.slice(0, k), partial: true };

  const covered = new Set(ranked.slice(0, k).flatMap((r) => r.turnRefs));
  const fresh = said(coldHits, (h) => h.turn.ts).filter((h) => !covered.has(h.turn.turnId));
  const coldSlots = Math.min(fresh.length, Math.max(k - ranked.length, lowConfidence ? Math.floor(k / 2) : 0));
  const kept = ranked.slice(0, k - coldSlots);
  const lowest = kept.at(-1)?.score ?? opts.confidenceThreshold;
  const base = Math.min(lowest, opts.confidenceThreshold);
  const cold = fresh.slice(0, coldSlots).map((h, i) => coldResult(h, base * COLD_SCALE * (1 - i / (coldSlots + 1))));
  if (state) for (const r of cold) markOutdated(r, state);
  return { results: [...kept, ...cold], partial };
}

type MemoryRead = { doc: HotDocument | null; buffered: Turn[]; schema: ExtractionSchema };

async function readMemory(reads: MemoryReads, scope: Scope): Promise<MemoryRead> {
  const [doc, buffered, schema] = await Promise.all([reads.hot(scope), reads.buffered(scope), reads.schema(scope)]);
  return { doc, buffered, schema };
}

/** Confidence label of a score: high ≥ max(0.6, threshold + 0.2), medium ≥ threshold, low otherwise. */
export function confidenceOf(score: number, threshold: number): Confidence {
  if (score >= Math.max(0.6, threshold + 0.2)) return 'high';
  return score >= threshold ? 'medium' : 'low';
}

function fuse(vector: Float32Array, vectorHits: AcuHit[], keywordHits: AcuHit[], hybrid: boolean, opts: CascadeOptions): SearchResult[] {
  const lambda = opts.mmrLambda ?? 1;
  const spread = (scored: Scored[]) => (lambda < 1 ? diversify(scored, (s) => s.hit.acu.embedding, lambda) : scored);
  if (!hybrid) return spread(vectorHits.map((hit) => ({ hit, score: clamp01(hit.score), source: 'acu' as const }))).map((s) => ranked(s.hit, s.score, s.source, opts));
  const cosOf = new Map(vectorHits.map((h) => [h.acu.id, h.score]));
  const fused = reciprocalRankFusion([vectorHits, keywordHits], (h) => h.acu.id, opts.rrfK);
  const maxRrf = 2 / (opts.rrfK + 1);
  let ceiling = 1;
  const scored = fused.map((f): Scored => {
    const cos = cosOf.get(f.item.acu.id) ?? cosine(vector, f.item.acu.embedding);
    // Cap by the previous score so rank and score never disagree.
    ceiling = Math.min(ceiling, clamp01(cos + RRF_BONUS * (f.score / maxRrf)));
    return { hit: f.item, score: ceiling, source: f.ranks[1] === 0 ? 'acu' : 'hybrid' };
  });
  return spread(scored).map((s) => ranked(s.hit, s.score, s.source, opts));
}

type Scored = { hit: AcuHit; score: number; source: 'acu' | 'hybrid' };

function ranked(h: AcuHit, score: number, source: 'acu' | 'hybrid', opts: CascadeOptions): SearchResult {
  return { text: h.acu.text, score, confidence: confidenceOf(score, opts.confidenceThreshold), source, turnRefs: [...h.acu.turnRefs], validAt: h.acu.validAt };
}

function coldResult(h: ColdHit, score: number): SearchResult {
  const t = h.turn;
  const who = speakerLabel(t);
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
