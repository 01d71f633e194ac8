import type { SearchResult } from '../core/types.ts';
import { outdatedMarks, type FactState } from './fact-state.ts';
import { currentFactResult } from './fact-search.ts';

/**
 * One ranking for the tiers memory_search merges (PROTOCOL.md): every result stating a value
 * that no longer holds carries `outdated`, and never ranks above the current fact of its key
 * (which is brought in when the tiers missed it); a turn already compressed into a returned
 * ACU is not repeated; the rest ranks by score. Cold results are placed below all of these
 * by the cascade.
 */
export function rankTiers(tiers: { facts: SearchResult[]; recent: SearchResult[]; acus: SearchResult[] }, state: FactState | null, asOf: number | undefined): SearchResult[] {
  const inAcus = new Set(tiers.acus.flatMap((r) => r.turnRefs));
  const results = [...tiers.facts, ...tiers.recent.filter((r) => !r.turnRefs.some((id) => inAcus.has(id))), ...tiers.acus];
  if (state) for (const r of results) markOutdated(r, state);
  if (state && asOf === undefined) keepCurrentAbove(results, state);
  return results.map((r, i) => ({ r, i })).sort((a, b) => b.r.score - a.r.score || a.i - b.i).map((x) => x.r);
}

/** Mark one result (any tier) that states a stale value: a history fact, or a text/turn stating one. */
export function markOutdated(r: SearchResult, state: FactState): void {
  if (r.fact) {
    if (r.fact.status === 'active') return; // current, or an inferred candidate: a possibility, not history
    const cur = state.current.get(r.fact.key);
    r.outdated = { key: r.fact.key, now: cur ? cur.value : null };
    return;
  }
  const [mark] = outdatedMarks(state, r.text, r.turnRefs);
  if (mark) r.outdated = mark;
}

/** An outdated result never outranks the current fact of its key; that fact is added when missing. */
function keepCurrentAbove(results: SearchResult[], state: FactState): void {
  const currentScore = new Map<string, number>();
  for (const r of results) if (r.fact && r.fact.status === 'active' && r.fact.source !== 'inferred') currentScore.set(r.fact.key, Math.max(r.score, currentScore.get(r.fact.key) ?? 0));
  for (const r of [...results]) {
    const key = r.outdated?.key;
    if (key === undefined || r.outdated?.now === null) continue;
    let top = currentScore.get(key);
    if (top === undefined) {
      const cur = state.current.get(key);
      if (!cur) continue;
      const injected = currentFactResult(cur, Math.min(1, r.score + 0.01), state.now);
      results.push(injected);
      top = injected.score;
      currentScore.set(key, top);
    }
    if (r.score >= top) r.score = Math.max(0, top - 0.001);
  }
}
