import { describe, expect, it } from 'vitest';
import type { Turn } from '../../src/core/types.ts';
import type { ColdArchive } from '../../src/ports/cold-archive.ts';
import { HOSTILE_QUERIES, makeTurn, randomScope, sibling } from '../support/fixtures.ts';
import { useSubject, type ContractOptions } from '../support/subject.ts';

function corpus(): Turn[] {
  return [
    makeTurn(1, { turnId: 'c-visit', text: 'Rajiv wants a site visit in Whitefield on Saturday morning' }),
    makeTurn(2, { turnId: 'c-office', text: 'The site office is closed on Sunday' }),
    makeTurn(3, { turnId: 'c-budget', text: 'Our budget was approved for eighty lakhs', speaker: 'Rajiv Kumar', asrConfidence: 0.93 }),
    makeTurn(4, { turnId: 'c-weather', text: 'The weather in Bengaluru is lovely today', role: 'agent', interrupted: true }),
    makeTurn(5, { turnId: 'c-cafe', text: 'We met at the Café near the metro station' }),
  ];
}

/** The ColdArchive contract: idempotent archiving, keyword search that ranks and never throws, forget. */
export function coldArchiveContract(name: string, make: () => Promise<ColdArchive>, opts: ContractOptions<ColdArchive> = {}): void {
  describe(`ColdArchive contract: ${name}`, () => {
    const archive = useSubject(make, opts);

    it('archives turns and counts them; re-archiving is an upsert by turnId', async () => {
      const scope = randomScope();
      const turns = corpus();
      await archive().archive(scope, turns);
      await archive().archive(scope, turns);
      await archive().archive(scope, turns.slice(0, 2));
      expect(await archive().count(scope)).toBe(5);
      await archive().archive(scope, []);
      expect(await archive().count(scope)).toBe(5);
    });

    it('replaces an archived turn on upsert', async () => {
      const scope = randomScope();
      await archive().archive(scope, corpus());
      await archive().archive(scope, [makeTurn(3, { turnId: 'c-budget', text: 'The down payment is ten percent' })]);
      expect(await archive().count(scope)).toBe(5);
      const hits = await archive().search(scope, 'down payment', 5);
      expect(hits[0]?.turn.turnId).toBe('c-budget');
      expect((await archive().search(scope, 'eighty lakhs approved', 5)).map((h) => h.turn.turnId)).not.toContain('c-budget');
    });

    it('ranks the turn matching the query best first, larger rank = better', async () => {
      const scope = randomScope();
      await archive().archive(scope, corpus());
      const hits = await archive().search(scope, 'When is the Whitefield site visit?', 5);
      expect(hits[0]?.turn.turnId).toBe('c-visit');
      expect(hits.map((h) => h.turn.turnId)).toContain('c-office');
      for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.rank).toBeGreaterThanOrEqual(hits[i]!.rank);
      const budget = await archive().search(scope, 'what was the budget', 5);
      expect(budget[0]?.turn.turnId).toBe('c-budget');
    });

    it('returns archived turns verbatim, optional fields included', async () => {
      const scope = randomScope();
      const turns = corpus();
      await archive().archive(scope, turns);
      const [budget] = await archive().search(scope, 'approved lakhs', 1);
      expect(budget?.turn).toEqual(turns[2]);
      const [weather] = await archive().search(scope, 'weather', 1);
      expect(weather?.turn).toEqual(turns[3]);
    });

    it('matches case- and diacritic-insensitively', async () => {
      const scope = randomScope();
      await archive().archive(scope, corpus());
      expect((await archive().search(scope, 'WHITEFIELD', 3))[0]?.turn.turnId).toBe('c-visit');
      expect((await archive().search(scope, 'cafe', 3))[0]?.turn.turnId).toBe('c-cafe');
    });

    it('limits the number of hits to k', async () => {
      const scope = randomScope();
      await archive().archive(scope, corpus());
      expect(await archive().search(scope, 'site visit office weather budget', 2)).toHaveLength(2);
    });

    it('finds nothing for words that are not there', async () => {
      const scope = randomScope();
      await archive().archive(scope, corpus());
      expect(await archive().search(scope, 'xylophone quasar', 5)).toEqual([]);
    });

    it('never throws on hostile or odd input', async () => {
      const scope = randomScope();
      await archive().archive(scope, corpus());
      for (const q of HOSTILE_QUERIES) {
        const hits = await archive().search(scope, q, 5);
        expect(Array.isArray(hits), `query ${JSON.stringify(q.slice(0, 40))}`).toBe(true);
      }
      for (const q of ['"budget"', 'budget*', 'BUDGET!', '(budget)', 'budget?']) {
        expect((await archive().search(scope, q, 5))[0]?.turn.turnId, q).toBe('c-budget');
      }
    });

    it('searches only the given user', async () => {
      const a = randomScope();
      const b = sibling(a);
      const otherTenant = { ...randomScope(), agentId: a.agentId, userId: a.userId };
      await archive().archive(a, corpus());
      await archive().archive(b, [makeTurn(1, { turnId: 'b-only', text: 'budget for the other user' })]);
      expect((await archive().search(a, 'budget', 10)).map((h) => h.turn.turnId)).toEqual(['c-budget']);
      expect((await archive().search(b, 'budget', 10)).map((h) => h.turn.turnId)).toEqual(['b-only']);
      expect(await archive().search(otherTenant, 'budget', 10)).toEqual([]);
    });

    it('forgets one user only', async () => {
      const a = randomScope();
      const b = sibling(a);
      await archive().archive(a, corpus());
      await archive().archive(b, corpus());
      await archive().forget(a);
      expect(await archive().count(a)).toBe(0);
      expect(await archive().search(a, 'budget', 5)).toEqual([]);
      expect(await archive().count(b)).toBe(5);
      expect((await archive().search(b, 'budget', 5))[0]?.turn.turnId).toBe('c-budget');
      await archive().archive(a, corpus().slice(0, 1));
      expect(await archive().count(a)).toBe(1);
    });
  });
}
