import { describe, expect, it } from 'vitest';
import type { SearchResult } from '../../src/core/types.ts';
import { rankTiers } from '../../src/memory/search-ranking.ts';

const acu = (text: string, score: number, turnRefs: string[], source: SearchResult['source'] = 'hybrid'): SearchResult => ({
  text,
  score,
  confidence: 'medium',
  source,
  turnRefs,
  validAt: '2026-01-05T10:00:00.000Z',
});

describe('rankTiers: each slot is distinct evidence', () => {
  it('joins a lower ACU that shares a turn with a higher one into it (text appended, turns added), and keeps ACUs of other turns apart', () => {
    const ranked = rankTiers(
      {
        facts: [],
        recent: [],
        acus: [
          acu("Rajiv Kumar's (user) budget is around 50 lakhs, as of 2026-01-05.", 0.6, ['t6']),
          acu('Asha (agent) asked "What budget does Rajiv Kumar have in mind?" and Rajiv Kumar (user) answered "…", as of 2026-01-05.', 0.55, ['t5', 't6']),
          acu('Rajiv Kumar (user) applied for a loan with HDFC, as of 2026-01-05.', 0.5, ['t8']),
          acu('Asha (agent) said the agent will send the options, as of 2026-01-05.', 0.45, ['t5'], 'acu'),
        ],
      },
      null,
      undefined,
    );
    expect(ranked.map((r) => [r.turnRefs, r.score])).toEqual([
      [['t6', 't5'], 0.6],
      [['t8'], 0.5],
    ]);
    expect(ranked[0]!.text).toBe(
      "Rajiv Kumar's (user) budget is around 50 lakhs, as of 2026-01-05. " +
        'Asha (agent) asked "What budget does Rajiv Kumar have in mind?" and Rajiv Kumar (user) answered "…", as of 2026-01-05. ' +
        'Asha (agent) said the agent will send the options, as of 2026-01-05.',
    );
  });

  it('never joins an ACU into a fact result of the same turn', () => {
    const fact: SearchResult = { ...acu('budget is ₹80 lakh', 0.9, ['t6'], 'fact') };
    const ranked = rankTiers({ facts: [fact], recent: [], acus: [acu('The budget is 80 lakhs, as of 2026-01-15.', 0.7, ['t6'])] }, null, undefined);
    expect(ranked.map((r) => r.source)).toEqual(['fact', 'hybrid']);
  });
});
