import type { Turn } from '../core/types.ts';

/** Smart Keep knobs (config `memory.minKeptTurns`, `maxKeptTurns`, `smartKeep`). */
export interface SmartKeepConfig {
  minKeptTurns: number;
  maxKeptTurns: number;
  weights: { recency: number; question: number; density: number };
}

/** Stage 0 output: turns that stay hot, the compression window, and every turn's score by turnId. */
export interface SmartKeepResult {
  kept: Turn[];
  window: Turn[];
  scores: Map<string, number>;
}

/**
 * Normalised score (0..1) a turn beyond the last `minKeptTurns` needs to stay hot.
 * With the default weights (0.5/0.3/0.2) an open question from the older half of the
 * history, or a plain turn from the newest fifth, clears it; old chit-chat does not.
 */
export const SMART_KEEP_THRESHOLD = 0.4;

/** Entity hits per token are scaled so that one hit in three tokens already counts as fully dense. */
const DENSITY_SCALE = 3;

const QUESTION_START = /^(who|whom|whose|what|when|where|which|why|how|do|does|did|can|could|would|will|should|shall|is|are|was|were|have|has|may|might)\b/i;
// "may" is left out (a modal verb far more often than a month); "May" mid-sentence still counts as capitalised.
const CALENDAR_WORD = /^(jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|june?|july?|aug(ust)?|sept?(ember)?|oct(ober)?|nov(ember)?|dec(ember)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday)$/i;
const CURRENCY = /^[₹$€£¥]|^(rs\.?|inr|usd|eur)$/i;
const PRONOUN_I = /^I(['’](m|ve|ll|d))?$/;

/**
 * Stage 0 (docs/design.md §3): split the hot turns into kept and window. The last
 * `minKeptTurns` always stay (the last question–answer pair survives); up to
 * `maxKeptTurns` in all, the best-scoring other turns above SMART_KEEP_THRESHOLD
 * stay too (an open question scores high; an answered one goes with its answer). Both lists come back in seq order. Score = weights · (recency, question,
 * density) divided by the weight sum, so the threshold holds for any weighting.
 */
export function smartKeep(turns: readonly Turn[], cfg: SmartKeepConfig): SmartKeepResult {
  const ordered = [...turns].sort((a, b) => a.seq - b.seq);
  const n = ordered.length;
  const scores = new Map<string, number>();
  ordered.forEach((t, i) => scores.set(t.turnId, scoreTurn(t, i, n, cfg.weights, answered(ordered, i))));

  const minKept = Math.max(0, Math.min(n, cfg.minKeptTurns));
  const maxKept = Math.max(minKept, cfg.maxKeptTurns);
  const keptIds = new Set(ordered.slice(n - minKept).map((t) => t.turnId));
  const candidates = ordered
    .slice(0, n - minKept)
    .filter((t) => (scores.get(t.turnId) ?? 0) > SMART_KEEP_THRESHOLD)
    .sort((a, b) => (scores.get(b.turnId) ?? 0) - (scores.get(a.turnId) ?? 0) || b.seq - a.seq);
  for (const t of candidates.slice(0, Math.max(0, maxKept - minKept))) keptIds.add(t.turnId);

  return {
    kept: ordered.filter((t) => keptIds.has(t.turnId)),
    window: ordered.filter((t) => !keptIds.has(t.turnId)),
    scores,
  };
}

/**
 * Has the other side spoken after the turn at `index` in its session? A question that was
 * answered is no longer open: it leaves with its answer, so the two are compressed together
 * (kept alone, the question stayed hot while its answer was archived without it, and neither
 * ACU could say what was asked and answered).
 */
function answered(ordered: readonly Turn[], index: number): boolean {
  const t = ordered[index]!;
  for (let j = index + 1; j < ordered.length; j++) {
    const u = ordered[j]!;
    if (u.sessionId === t.sessionId && u.role !== t.role && (u.role === 'user' || u.role === 'agent')) return true;
  }
  return false;
}

/**
 * Weighted, normalised score of the turn at position `index` of `count` (seq order). The
 * question term counts an open question only: `answered` turns score as statements.
 */
export function scoreTurn(turn: Turn, index: number, count: number, weights: SmartKeepConfig['weights'], answered = false): number {
  const recency = count <= 1 ? 1 : index / (count - 1);
  const question = !answered && isQuestion(turn.text) ? 1 : 0;
  const density = factDensity(turn.text);
  const total = weights.recency + weights.question + weights.density;
  if (total <= 0) return 0;
  return (weights.recency * recency + weights.question * question + weights.density * density) / total;
}

/** A question mark anywhere, or a sentence opening with an interrogative or auxiliary verb. */
export function isQuestion(text: string): boolean {
  if (text.includes('?')) return true;
  return text.split(/[.!]\s+/).some((sentence) => QUESTION_START.test(sentence.trim()));
}

/**
 * Named-entity / fact density (0..1): capitalised words not opening a sentence,
 * numbers, amounts, dates and calendar words, per token, scaled and capped.
 */
export function factDensity(text: string): number {
  const tokens = text.split(/\s+/).filter((t) => t.length > 0);
  if (tokens.length === 0) return 0;
  let hits = 0;
  let sentenceStart = true;
  for (const raw of tokens) {
    const word = raw.replace(/^[("'“‘]+|[)"'”’,;:.!?]+$/g, '');
    if (word.length > 0 && isFactToken(word, sentenceStart)) hits++;
    sentenceStart = /[.!?]["'”’)]*$/.test(raw);
  }
  return Math.min(1, (DENSITY_SCALE * hits) / tokens.length);
}

function isFactToken(word: string, sentenceStart: boolean): boolean {
  if (/\d/.test(word) || CURRENCY.test(word) || CALENDAR_WORD.test(word)) return true;
  if (sentenceStart || PRONOUN_I.test(word)) return false;
  return /^\p{Lu}/u.test(word);
}
