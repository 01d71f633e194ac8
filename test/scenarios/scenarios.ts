import type { TestServer } from '../conversations/support.ts';
import { SCENARIOS } from './catalog/index.ts';
import { runScenario, type Outcome } from './runner.ts';

/** Share of scenarios right, per check and domain: what `npm run bench -- --only scenarios` reports. */
export interface ScenarioScores {
  scenarios: number;
  /** Per check: [right, checked]. */
  timeline: [number, number];
  context: [number, number];
  search: [number, number];
  /** Scenarios whose every context block passed the block checker: [right, checked]. */
  block: [number, number];
  /** Scenarios whose every check is right, per domain: [right, total]. */
  domains: Record<string, [number, number]>;
  failures: string[];
}

export async function scoreScenarios(srv: TestServer, onProgress?: (done: number, total: number) => void): Promise<{ scores: ScenarioScores; outcomes: Outcome[] }> {
  const outcomes: Outcome[] = [];
  for (const s of SCENARIOS) {
    outcomes.push(await runScenario(srv, s));
    onProgress?.(outcomes.length, SCENARIOS.length);
  }
  const tally = (k: 'timeline' | 'context' | 'search' | 'block'): [number, number] => {
    const checked = outcomes.filter((o) => o[k] !== null);
    return [checked.filter((o) => o[k]!.ok).length, checked.length];
  };
  const domains: Record<string, [number, number]> = {};
  const failures: string[] = [];
  for (const o of outcomes) {
    const d = (domains[o.scenario.domain] ??= [0, 0]);
    const bad = (['timeline', 'context', 'search', 'block'] as const).flatMap((k) => (o[k] && !o[k]!.ok ? [(o[k] as { why: string }).why] : []));
    d[1]++;
    if (bad.length === 0) d[0]++;
    else failures.push(`${o.scenario.id}: ${bad.join(' | ')}`);
  }
  return { scores: { scenarios: outcomes.length, timeline: tally('timeline'), context: tally('context'), search: tally('search'), block: tally('block'), domains, failures }, outcomes };
}
