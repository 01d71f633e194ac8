import { describe, expect, it } from 'vitest';
import type { Acu, Scope } from '../../src/core/types.ts';
import type { AcuIndex } from '../../src/ports/acu-index.ts';
import { HOSTILE_QUERIES, makeAcu, randomScope, sibling, unitVector } from '../support/fixtures.ts';
import { useSubject, type ContractOptions } from '../support/subject.ts';

/** Hand-built ACUs whose cosine to e0 is known: 1, 0.8, 0, 0, -1. */
function geometry(scope: Scope): Record<'same' | 'close' | 'orthogonal' | 'far' | 'opposite', Acu> {
  return {
    same: makeAcu(scope, 'Rajiv Kumar budget was approved for eighty lakhs', unitVector({ 0: 1 })),
    close: makeAcu(scope, 'Rajiv Kumar wants a three bedroom flat', unitVector({ 0: 0.8, 1: 0.6 })),
    orthogonal: makeAcu(scope, 'Rajiv Kumar scheduled a site visit in Whitefield', unitVector({ 1: 1 })),
    far: makeAcu(scope, 'Rajiv Kumar prefers calls in the evening', unitVector({ 3: 1 })),
    opposite: makeAcu(scope, 'Rajiv Kumar owns a dog named Bruno', unitVector({ 0: -1 })),
  };
}

function expectVectorClose(actual: Float32Array, expected: Float32Array): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) expect(actual[i]!).toBeCloseTo(expected[i]!, 5);
}

/** The AcuIndex contract: upsert by id, cosine ranking per user (one vector or many), BM25 leg when capable, count, forget. */
export function acuIndexContract(name: string, make: () => Promise<AcuIndex>, opts: ContractOptions<AcuIndex> = {}): void {
  describe(`AcuIndex contract: ${name}`, () => {
    const index = useSubject(make, opts);

    it('is empty for a new user', async () => {
      const scope = randomScope();
      expect(await index().count(scope)).toBe(0);
      expect(await index().search(scope, unitVector({ 0: 1 }), 5)).toEqual([]);
    });

    it('upserts by id: the same ACUs twice are stored once, a changed one is replaced', async () => {
      const scope = randomScope();
      const g = geometry(scope);
      await index().upsert(scope, Object.values(g));
      await index().upsert(scope, [g.same, g.close]);
      expect(await index().count(scope)).toBe(5);
      await index().upsert(scope, [{ ...g.far, text: 'Rajiv Kumar prefers morning calls', embedding: unitVector({ 0: 0.6, 2: 0.8 }) }]);
      expect(await index().count(scope)).toBe(5);
      const hits = await index().search(scope, unitVector({ 0: 1 }), 3);
      expect(hits[2]?.acu.id).toBe(g.far.id);
      expect(hits[2]?.acu.text).toBe('Rajiv Kumar prefers morning calls');
      expect(hits[2]?.score).toBeCloseTo(0.6, 4);
      await index().upsert(scope, []);
      expect(await index().count(scope)).toBe(5);
    });

    it('ranks by cosine similarity, best first, with cosine scores', async () => {
      const scope = randomScope();
      const g = geometry(scope);
      await index().upsert(scope, [g.far, g.orthogonal, g.opposite, g.close, g.same]);
      const hits = await index().search(scope, unitVector({ 0: 1 }), 10);
      expect(hits).toHaveLength(5);
      expect(hits.slice(0, 2).map((h) => h.acu.id)).toEqual([g.same.id, g.close.id]);
      expect(hits[0]!.score).toBeCloseTo(1, 4);
      expect(hits[1]!.score).toBeCloseTo(0.8, 4);
      expect(hits[2]!.score).toBeCloseTo(0, 4);
      expect(hits[4]!.acu.id).toBe(g.opposite.id);
      expect(hits[4]!.score).toBeCloseTo(-1, 4);
      for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
      const towardC = await index().search(scope, unitVector({ 0: 0.1, 1: 1 }), 2);
      expect(towardC.map((h) => h.acu.id)).toEqual([g.orthogonal.id, g.close.id]);
    });

    it('answers nearestMany as one search per vector, in order, within the user', async () => {
      const scope = randomScope();
      const g = geometry(scope);
      await index().upsert(scope, Object.values(g));
      const other = sibling(scope);
      await index().upsert(other, [makeAcu(other, 'Whitefield site visit budget dog', unitVector({ 0: 1 }))]);
      const queries = [unitVector({ 0: 1 }), unitVector({ 1: 1 }), unitVector({ 3: 1 }), unitVector({ 0: -1 })];
      const many = await index().nearestMany(scope, queries, 2);
      expect(many).toHaveLength(4);
      expect(many.map((hits) => hits[0]?.acu.id)).toEqual([g.same.id, g.orthogonal.id, g.far.id, g.opposite.id]);
      for (const [i, q] of queries.entries()) {
        const single = await index().search(scope, q, 2);
        expect(many[i]!.map((h) => h.acu.id)).toEqual(single.map((h) => h.acu.id));
        many[i]!.forEach((h, j) => expect(h.score).toBeCloseTo(single[j]!.score, 4));
      }
      expect(await index().nearestMany(scope, [], 2)).toEqual([]);
      expect(await index().nearestMany(scope, queries.slice(0, 2), 0)).toEqual([[], []]);
      expect(await index().nearestMany(randomScope(), queries.slice(0, 1), 2)).toEqual([[]]);
    });

    it('limits hits to k', async () => {
      const scope = randomScope();
      await index().upsert(scope, Object.values(geometry(scope)));
      expect(await index().search(scope, unitVector({ 0: 1 }), 2)).toHaveLength(2);
      expect(await index().search(scope, unitVector({ 0: 1 }), 1)).toHaveLength(1);
    });

    it('returns the ACU as stored (text, refs, session, times, hash, embedding)', async () => {
      const scope = randomScope();
      const g = geometry(scope);
      await index().upsert(scope, [g.close]);
      const [hit] = await index().search(scope, unitVector({ 0: 0.8, 1: 0.6 }), 1);
      const { embedding, ...rest } = hit!.acu;
      const { embedding: expected, ...expectedRest } = g.close;
      expect(rest).toEqual(expectedRest);
      expectVectorClose(embedding, expected);
    });

    it('sees ACUs upserted after a previous search', async () => {
      const scope = randomScope();
      const g = geometry(scope);
      await index().upsert(scope, [g.close, g.far]);
      expect((await index().search(scope, unitVector({ 0: 1 }), 1))[0]?.acu.id).toBe(g.close.id);
      await index().upsert(scope, [g.same]);
      expect((await index().search(scope, unitVector({ 0: 1 }), 1))[0]?.acu.id).toBe(g.same.id);
    });

    it('never returns another user’s or tenant’s ACUs', async () => {
      const a = randomScope();
      const b = sibling(a);
      const otherTenant = { ...randomScope(), agentId: a.agentId, userId: a.userId };
      await index().upsert(a, [geometry(a).far]);
      await index().upsert(b, [geometry(b).same]);
      await index().upsert(otherTenant, [geometry(otherTenant).same]);
      const hits = await index().search(a, unitVector({ 0: 1 }), 10);
      expect(hits.map((h) => h.acu.id)).toEqual([geometry(a).far.id]);
      expect(await index().count(a)).toBe(1);
      expect(await index().count(b)).toBe(1);
    });

    it('keyword-searches by BM25 when capable (best first), and returns nothing otherwise', async () => {
      const scope = randomScope();
      const g = geometry(scope);
      const other = sibling(scope);
      await index().upsert(scope, Object.values(g));
      await index().upsert(other, [makeAcu(other, 'Whitefield site visit budget dog', unitVector({ 5: 1 }))]);
      const hits = await index().keywordSearch(scope, 'When is the Whitefield site visit?', 3);
      if (!index().capabilities.bm25) {
        expect(hits).toEqual([]);
        return;
      }
      expect(hits[0]?.acu.id).toBe(g.orthogonal.id);
      expect(hits.every((h) => h.acu.id !== makeAcu(other, 'Whitefield site visit budget dog', unitVector({ 5: 1 })).id)).toBe(true);
      for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
      expect((await index().keywordSearch(scope, 'BRUNO', 3))[0]?.acu.id).toBe(g.opposite.id);
      expect(await index().keywordSearch(scope, 'Rajiv Kumar', 2)).toHaveLength(2);
      expect(await index().keywordSearch(scope, 'xylophone', 3)).toEqual([]);
      for (const q of HOSTILE_QUERIES) expect(Array.isArray(await index().keywordSearch(scope, q, 3))).toBe(true);
    });

    it('forgets one user only', async () => {
      const a = randomScope();
      const b = sibling(a);
      await index().upsert(a, Object.values(geometry(a)));
      await index().upsert(b, Object.values(geometry(b)));
      await index().search(a, unitVector({ 0: 1 }), 3);
      await index().forget(a);
      expect(await index().count(a)).toBe(0);
      expect(await index().search(a, unitVector({ 0: 1 }), 3)).toEqual([]);
      expect(await index().keywordSearch(a, 'budget', 3)).toEqual([]);
      expect(await index().count(b)).toBe(5);
      expect((await index().search(b, unitVector({ 0: 1 }), 1))[0]?.acu.id).toBe(geometry(b).same.id);
    });
  });
}
