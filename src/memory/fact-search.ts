import { iso } from '../core/clock.ts';
import { speakerLabel } from '../core/speaker.ts';
import type { ExtractionSchema, FieldDef } from '../core/extraction-schema.ts';
import { STOPWORDS } from '../core/stopwords.ts';
import type { HotDocument, ResultFact, SearchResult, TemporalEntity, Turn } from '../core/types.ts';
import { keyLabel } from './fact-state.ts';
import { stem } from '../text/stem.ts';
import { isExpired } from './supersession.ts';
import { formatValue } from '../text/values.ts';

/**
 * The two tiers memory_search reads from the hot document and the turn buffer, before
 * anything is compressed into ACUs: structured facts and kept/buffered turns. Both are
 * scored lexically here, which works with any embedder; with one that measures meaning,
 * semantic-match.ts scores them by meaning too, in the same bands. A question that names a
 * field ("what is the budget?") scores its current fact above any ACU; a value only a turn
 * states is found in the turn.
 */

/** Score bands: a fact whose field the question names starts here (above typical ACU cosines). */
export const FIELD_MATCH_SCORE = 0.8;
/** A fact matched only by a hint or its value scores from here by its coverage of the query, like a fair ACU match. */
export const WEAK_MATCH_SCORE = 0.25;
/** Share of the query's terms a fact must cover for its field's name in the question to put it first. */
const NAMED_MIN_COVERAGE = 0.3;
/** Below this share of the query's terms, a fact the question does not name is chance, not an answer. */
const WEAK_MIN_COVERAGE = 0.34;
/** Turn results score from RECENT_BASE_SCORE up to RECENT_BASE_SCORE + RECENT_SPAN by the share of query terms they hold. */
export const RECENT_BASE_SCORE = 0.3;
export const RECENT_SPAN = 0.35;
/**
 * History (superseded, retracted, expired) ranks at a fraction of its match score: near the
 * live results when the question looks back ("what was it before?"), else well below them,
 * where it cannot push an answer the question is after out of the top few.
 */
const HISTORY_FACTOR_PAST = 0.45;
const HISTORY_FACTOR = 0.2;
// Words that ask about an earlier state. Plain past tense ("what was approved?") is not one:
// callers ask about current facts in the past tense all the time.
const PAST_CUE = /\b(before|previous(ly)?|earlier|former(ly)?|old|original(ly)?|used to|prior|at first|changed from|no longer|anymore|history)\b/i;

/** When the search is asked as of a world time (docs/protocol.md `asOf`); `now` is system time for expiry. */
export interface TierClock {
  now: number;
  asOf?: number;
}

/** Content terms of a text: lower-case words, stopwords dropped, stemmed. */
export function terms(text: string): string[] {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((w) => !STOPWORDS.has(w) && !QUESTION_WORDS.has(w)).map(stem);
}

// Words that make a question a question, not what it is about.
const QUESTION_WORDS = new Set(['whats', 'much', 'many', 'current', 'currently', 'still', 'user', 'caller', 'customer', 'remember', 'said', 'say', 'told', 'mention', 'mentioned']);

/**
 * Fact results for `query`: current values, waiting candidates, and matching history, best first.
 * `byMeaning` scores a field by what the question means (semantic-match.ts), in the same bands
 * as the lexical match; a record takes the better of the two.
 */
export function factResults(doc: HotDocument | null, schema: ExtractionSchema, query: string, clock: TierClock, byMeaning?: (field: string) => number | null): SearchResult[] {
  if (!doc) return [];
  const q = terms(query);
  if (q.length === 0 && !byMeaning) return [];
  const fields = new Map(schema.fields.map((f) => [f.name, f]));
  const historyFactor = clock.asOf !== undefined || PAST_CUE.test(query) ? HISTORY_FACTOR_PAST : HISTORY_FACTOR;
  const out: SearchResult[] = [];
  for (const e of doc.entities) {
    const state = stateAt(e, clock);
    if (state === null) continue;
    const match = best(q.length > 0 ? matchScore(q, e, fields.get(e.field)) : null, byMeaning?.(e.field) ?? null);
    if (match === null) continue;
    const live = state === 'current' || state === 'candidate';
    const score = live ? match : match * historyFactor;
    // As of a past time a record valid then is the answer, but its text must not call it current today.
    const holdsNow = e.status === 'active' && !isExpired(e, clock.now);
    out.push({
      text: factText(e, holdsNow ? state : 'history'),
      score,
      confidence: e.source === 'inferred' || !live ? 'low' : score >= FIELD_MATCH_SCORE ? 'high' : 'medium',
      source: 'fact',
      turnRefs: [...e.evidence],
      validAt: e.validFrom,
      fact: resultFact(e, clock),
    });
  }
  return out.sort((a, b) => b.score - a.score);
}

/** Turn results: kept and buffered turns (deduplicated) that share content words with the query. */
export function recentResults(turns: readonly Turn[], query: string, clock: TierClock): SearchResult[] {
  const q = new Set(terms(query));
  if (q.size === 0) return [];
  const out: SearchResult[] = [];
  for (const t of saidTurns(turns, clock)) {
    const share = wordShare(q, t);
    if (share !== null) out.push(turnResult(t, RECENT_BASE_SCORE + RECENT_SPAN * share));
  }
  return byScoreThenNewest(out);
}

/** Kept and buffered turns, one per turn id, said by the time the search looks at. */
export function saidTurns(turns: readonly Turn[], clock: TierClock): Turn[] {
  const byId = new Map<string, Turn>();
  for (const t of turns) if (clock.asOf === undefined || t.ts <= clock.asOf) byId.set(t.turnId, t);
  return [...byId.values()];
}

/** Share of the query's terms the turn holds, or null when that is chance. */
export function wordShare(q: ReadonlySet<string>, t: Turn): number | null {
  const words = new Set(terms(t.text));
  let hits = 0;
  for (const w of q) if (words.has(w)) hits++;
  // One shared word is chance in a long conversation; two (or the whole of a one-word query) is a match.
  return hits < Math.min(2, q.size) ? null : hits / q.size;
}

/** A turn as a result: who said it, when, and what; `asked` is the agent's question it answers. */
export function turnResult(t: Turn, score: number, asked?: Turn): SearchResult {
  const said = asked ? `${speakerLabel(t)} on ${iso(t.ts).slice(0, 10)}, answering "${asked.text.trim()}": ${t.text}` : `${speakerLabel(t)} on ${iso(t.ts).slice(0, 10)}: ${t.text}`;
  const turnRefs = asked ? [asked.turnId, t.turnId] : [t.turnId];
  return { text: said, score, confidence: score >= 0.5 ? 'medium' : 'low', source: 'recent', turnRefs, validAt: iso(t.ts) };
}

/** Best first; of equal scores, the newer turn. */
export function byScoreThenNewest(results: SearchResult[]): SearchResult[] {
  return results.sort((a, b) => b.score - a.score || Date.parse(b.validAt) - Date.parse(a.validAt));
}

function best(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.max(a, b);
}

type FactStateAt = 'current' | 'candidate' | 'history';

/**
 * Where a record stands for this search. Now: active and unexpired records are current (or
 * inferred candidates), the rest history. As of a world time: records valid then (never
 * retracted ones, which never held), nothing else.
 */
function stateAt(e: TemporalEntity, clock: TierClock): FactStateAt | null {
  if (clock.asOf !== undefined) {
    if (e.status === 'retracted' || (e.status === 'active' && e.source === 'inferred')) return null;
    const from = Date.parse(e.validFrom);
    const until = e.validUntil === null ? Infinity : Date.parse(e.validUntil);
    const expired = e.expiresAt !== null && Date.parse(e.expiresAt) <= clock.asOf;
    return from <= clock.asOf && clock.asOf < until && !expired ? 'current' : null;
  }
  if (e.status !== 'active' || isExpired(e, clock.now)) return 'history';
  return e.source === 'inferred' ? 'candidate' : 'current';
}

/**
 * How well the question is about this record: every query term is matched against the field's
 * name (and the key's qualifier), its hints, its value, and its description, in that order of
 * weight. Null unless at least one term hits something stronger than the description.
 */
function matchScore(q: readonly string[], e: TemporalEntity, field: FieldDef | undefined): number | null {
  const name = new Set(terms(`${e.field} ${e.key.includes(':') ? e.key.slice(e.key.indexOf(':') + 1) : ''}`.replace(/_/g, ' ')));
  const hints = new Set(terms((field?.hints ?? []).join(' ')));
  const value = new Set(terms(formatValue(e.value)));
  const description = new Set(terms(field?.description ?? ''));
  let named = false;
  let strong = false;
  let covered = 0;
  for (const t of q) {
    if (name.has(t)) {
      named = strong = true;
      covered += 1;
    } else if (hints.has(t) || value.has(t)) {
      strong = true;
      covered += 0.8;
    } else if (description.has(t)) covered += 0.4;
  }
  if (!strong) return null;
  const coverage = Math.min(1, covered / q.length);
  // A field's word in a question about something else ("what did she do with her family on
  // hikes?") does not make it a question about the field: naming it must carry the question,
  // by covering enough of it or by being what it asks about first ("what did the caller say
  // about the budget for the flat near the metro?").
  if (named && (coverage >= NAMED_MIN_COVERAGE || name.has(q[0]!))) return FIELD_MATCH_SCORE + 0.15 * coverage;
  return coverage < WEAK_MIN_COVERAGE ? null : WEAK_MATCH_SCORE + 0.3 * coverage;
}

/** One line that states the record as what it is: current, a possibility, or dated history. */
function factText(e: TemporalEntity, state: FactStateAt): string {
  const name = keyLabel(e.key);
  const value = formatValue(e.value);
  const from = e.validFrom.slice(0, 10);
  if (state === 'current') return `${name} is ${value} (since ${from})`;
  if (state === 'candidate') return `${name} may be ${value} (unconfirmed, said ${(e.statedAt ?? e.validFrom).slice(0, 10)})`;
  const until = e.validUntil ? ` until ${e.validUntil.slice(0, 10)}` : '';
  const why = e.status === 'retracted' ? 'retracted' : e.status === 'superseded' ? 'superseded' : 'expired';
  return `${name} was ${value} (from ${from}${until}; ${why})`;
}

function resultFact(e: TemporalEntity, clock: TierClock): ResultFact {
  const status = e.status === 'active' && isExpired(e, clock.now) ? 'expired' : e.status;
  return { key: e.key, field: e.field, value: e.value, status, source: e.source, validFrom: e.validFrom, validUntil: e.validUntil };
}
