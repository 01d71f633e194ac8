import type { SearchResult } from '../core/types.ts';
import { outdatedMarks, type FactState } from './fact-state.ts';

/**
 * One ranking for the tiers memory_search merges (docs/protocol.md): every result stating a value
 * that no longer holds carries `outdated` (whose `now` names the current value) and never ranks
 * above the current fact of its key; a turn already compressed into a returned ACU is not
 * repeated; the rest ranks by score. Cold results are placed below all of these by the cascade.
 * The current fact is not injected when no tier matched it: the mark already carries its value,
 * and an extra result would push a relevant one out of k (measured: −2 points of LoCoMo recall@10).
 */
export function rankTiers(tiers: { facts: SearchResult[]; recent: SearchResult[]; acus: SearchResult[] }, state: FactState | null, asOf: number | undefined): SearchResult[] {
  const inAcus = new Set(tiers.acus.flatMap((r) => r.turnRefs));
  const results = [...tiers.facts, ...tiers.recent.filter((r) => !r.turnRefs.some((id) => inAcus.has(id))), ...tiers.acus];
  if (state) for (const r of results) markOutdated(r, state);
  if (state && asOf === undefined) keepCurrentAbove(results);
  return joinSameTurns(
    results
      .map((r, i) => ({ r, i }))
      .sort((a, b) => b.r.score - a.r.score || a.i - b.i)
      .map((x) => x.r),
  );
}

/**
 * ACUs drawn from the same turns read as one result: a lower one that shares a turn with a higher
 * ACU result (and is marked the same way) is appended to that result's text, its turns joining the
 * result's, instead of taking a slot of its own. An answer's own ACU and the question-and-answer
 * ACU around it are one piece of evidence, so each slot of k is distinct evidence: nothing is
 * dropped, and the k slots reach more of the conversation (LoCoMo dev, fused: 47 % of the replies
 * had a slot sharing a turn with a higher result, 6.3 % of the top-10 slots; joining them raised
 * recall@10 from 71.8 % to 73.0 %, multi-hop 48.3 % to 49.7 %, BENCHMARKS.md).
 */
function joinSameTurns(results: SearchResult[]): SearchResult[] {
  const out: SearchResult[] = [];
  for (const r of results) {
    const host = isAcu(r) ? out.find((h) => isAcu(h) && sameMark(h, r) && r.turnRefs.some((id) => h.turnRefs.includes(id))) : undefined;
    if (host) {
      host.text = `${host.text} ${r.text}`;
      for (const id of r.turnRefs) if (!host.turnRefs.includes(id)) host.turnRefs.push(id);
    } else out.push(r);
  }
  return out;
}

const isAcu = (r: SearchResult): boolean => r.source === 'acu' || r.source === 'hybrid';
const sameMark = (a: SearchResult, b: SearchResult): boolean => a.outdated?.key === b.outdated?.key;

/** Mark one result (any tier) that states a stale value: a history fact, or a text/turn stating one. */
export function markOutdated(r: SearchResult, state: FactState): void {
  if (r.fact) {
    if (r.fact.status === 'active') return; // current, or an inferred candidate: a possibility, not history
    const cur = state.current.get(r.fact.key);
    r.outdated = { key: r.fact.key, now: cur ? cur.value : null };
    return;
  }
  const [mark] = outdatedMarks(state, r.text, r.turnRefs, Date.parse(r.validAt));
  if (mark) r.outdated = mark;
}

/** An outdated result never outranks the current fact of its key. */
function keepCurrentAbove(results: SearchResult[]): void {
  const currentScore = new Map<string, number>();
  for (const r of results) if (r.fact && r.fact.status === 'active' && r.fact.source !== 'inferred') currentScore.set(r.fact.key, Math.max(r.score, currentScore.get(r.fact.key) ?? 0));
  for (const r of results) {
    const top = r.outdated ? currentScore.get(r.outdated.key) : undefined;
    if (top !== undefined && r.score >= top) r.score = Math.max(0, top - 0.001);
  }
}
