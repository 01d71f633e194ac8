import { describe, expect, it } from 'vitest';
import type { FieldDef } from '../../src/core/extraction-schema.ts';
import type { FactValue, HotDocument, TemporalEntity, Turn } from '../../src/core/types.ts';
import { factState, mentionsValue, outdatedMarks } from '../../src/memory/fact-state.ts';
import { FIELD_MATCH_SCORE, WEAK_MATCH_SCORE, factResults, recentResults } from '../../src/memory/fact-search.ts';
import { rankTiers } from '../../src/memory/search-ranking.ts';
import { applyFacts, type ResolvedFact } from '../../src/memory/supersession.ts';

const NOW = Date.parse('2026-03-01T00:00:00Z');
const budget: FieldDef = { name: 'budget', category: 'temporal', type: 'money', description: 'Total budget for the purchase', hints: ['approved for', 'afford'] };
const city: FieldDef = { name: 'city', category: 'temporal', type: 'string', description: 'Where the caller lives', hints: ['i live in', 'moved to'] };
const schema = { fields: [budget, city] };
const lakh = (n: number): FactValue => ({ amount: n * 100_000, currency: 'INR' });

function said(field: FieldDef, value: FactValue, at: string, evidence: string[], extra: Partial<ResolvedFact> = {}): ResolvedFact {
  return { key: field.name, field, value, source: 'explicit', validFrom: at, statedAt: at, evidence, ...extra };
}

function docOf(facts: ResolvedFact[], recent: Turn[] = []): HotDocument {
  let state = { entities: [] as TemporalEntity[], profile: {} };
  for (const f of facts) state = applyFacts(state, [f], { now: NOW, defaultTtlHours: 24, idFor: (x) => `${x.key}:${JSON.stringify(x.value)}` });
  return {
    scope: { tenantId: 't', agentId: 'a', userId: 'u' },
    profile: {},
    entities: state.entities,
    recent,
    summaries: [],
    counters: { extractions: 1, turnsArchived: 0, acusIndexed: 0, acusSuppressed: 0 },
    version: 1,
    updatedAt: new Date(NOW).toISOString(),
  };
}

const changed = () => docOf([said(budget, lakh(50), '2026-01-05T10:00:00Z', ['t1']), said(budget, lakh(80), '2026-02-10T10:00:00Z', ['t9']), said(city, 'Pune', '2026-01-05T10:00:00Z', ['t1'])]);

describe('fact tier', () => {
  it('a question naming the field puts the current value first, history below it and marked as such', () => {
    const results = factResults(changed(), schema, 'What is my budget?', { now: NOW });
    expect(results.map((r) => [r.fact?.value, r.fact?.status])).toEqual([
      [lakh(80), 'active'],
      [lakh(50), 'superseded'],
    ]);
    expect(results[0]).toMatchObject({ source: 'fact', confidence: 'high', turnRefs: ['t9'] });
    expect(results[0]!.score).toBeGreaterThanOrEqual(FIELD_MATCH_SCORE);
    expect(results[0]!.text).toBe('budget is ₹80 lakh (INR 8,000,000) (since 2026-02-10)');
    expect(results[1]!.text).toBe('budget was ₹50 lakh (INR 5,000,000) (from 2026-01-05 until 2026-02-10; superseded)');
    expect(results[1]!.score).toBeLessThan(results[0]!.score);
  });

  it('history sits well below live results unless the question looks back', () => {
    const now = factResults(changed(), schema, 'What is my budget?', { now: NOW });
    const back = factResults(changed(), schema, 'What was my budget before?', { now: NOW });
    const history = (rs: typeof now) => rs.find((r) => r.fact?.status === 'superseded')!.score;
    expect(history(back)).toBeGreaterThan(history(now) * 2);
    expect(history(now)).toBeLessThan(WEAK_MATCH_SCORE);
    expect(back[0]!.fact?.status).toBe('active');
  });

  it('a hint alone finds the field when it covers enough of the question; an unrelated question finds nothing', () => {
    expect(factResults(changed(), schema, 'How much was approved?', { now: NOW })[0]?.fact?.value).toEqual(lakh(80));
    expect(factResults(changed(), schema, 'Which school do the kids go to?', { now: NOW })).toEqual([]);
  });

  it("a field's word in a question about something else does not put its fact first", () => {
    const first = (q: string) => factResults(changed(), schema, q, { now: NOW })[0]?.score ?? 0;
    expect(first('Which city?')).toBeGreaterThanOrEqual(FIELD_MATCH_SCORE);
    expect(first('What did the kids enjoy most on their trip around the city last summer?')).toBeLessThan(FIELD_MATCH_SCORE);
    // Named first, it is what the question is about, however long the rest.
    expect(first('What did the caller say about the budget for the new flat near the metro station?')).toBeGreaterThanOrEqual(FIELD_MATCH_SCORE);
  });

  it('asOf answers with the value valid at that world time, never a retracted one', () => {
    const jan = factResults(changed(), schema, 'what was the budget', { now: NOW, asOf: Date.parse('2026-01-31T00:00:00Z') });
    expect(jan.map((r) => r.fact?.value)).toEqual([lakh(50)]);
    expect(jan[0]!.text).toMatch(/^budget was ₹50 lakh/);
    const fixed = docOf([said(city, 'Chennai', '2026-02-10T09:00:00Z', ['c1']), said(city, 'Mysore', '2026-01-20T09:00:00Z', ['c2'], { statedAt: '2026-02-20T09:00:00Z' })]);
    expect(factResults(fixed, schema, 'which city', { now: NOW, asOf: Date.parse('2026-02-15T00:00:00Z') }).map((r) => r.fact?.value)).toEqual(['Mysore']);
  });
});

describe('recent tier', () => {
  const turn = (seq: number, text: string, ts: string): Turn => ({ turnId: `t${seq}`, seq, sessionId: 's', role: 'user', text, ts: Date.parse(ts), receivedAt: Date.parse(ts), tokens: 5 });
  it('finds a turn sharing two content words (or a one-word query), not one sharing a single word by chance', () => {
    const turns = [turn(1, 'The plumber is coming on Friday to fix the kitchen sink.', '2026-02-01T10:00:00Z'), turn(2, 'My kitchen is small.', '2026-02-01T10:01:00Z')];
    expect(recentResults(turns, 'when is the plumber fixing the sink?', { now: NOW }).map((r) => r.turnRefs[0])).toEqual(['t1']);
    expect(
      recentResults(turns, 'kitchen', { now: NOW })
        .map((r) => r.turnRefs[0])
        .sort(),
    ).toEqual(['t1', 't2']);
    expect(recentResults(turns, 'plumber sink', { now: NOW, asOf: Date.parse('2026-01-31T00:00:00Z') })).toEqual([]);
  });
});

describe('outdated marks and ranking', () => {
  it('marks a text stating a superseded amount in any written form, not one that also states the current value', () => {
    const state = factState(changed().entities, NOW);
    expect(outdatedMarks(state, 'The budget is fifty lakh rupees.', [])).toEqual([{ key: 'budget', now: lakh(80) }]);
    expect(outdatedMarks(state, 'Budget went from 50 lakhs to 80 lakhs.', [])).toEqual([]);
    expect(outdatedMarks(state, 'Wants a 2BHK near the metro.', [])).toEqual([]);
    expect(outdatedMarks(state, 'Anything at all.', ['t1'])).toEqual([{ key: 'budget', now: lakh(80) }]);
  });

  it('mentionsValue: money by amount, dates by calendar day, strings as whole words', () => {
    expect(mentionsValue('₹50,00,000 approved', lakh(50))).toBe(true);
    expect(mentionsValue('5 million rupees', lakh(50))).toBe(true);
    expect(mentionsValue('50 people came', lakh(50))).toBe(false);
    expect(mentionsValue('born on 21st March 1990', '1990-03-21')).toBe(true);
    expect(mentionsValue('born on 12 March 1990', '1990-03-21')).toBe(false);
    expect(mentionsValue('moved to Punekar Colony', 'Pune')).toBe(false);
    expect(mentionsValue('lives in pune now', 'Pune')).toBe(true);
  });

  it("an outdated ACU never ranks above its key's current fact", () => {
    const doc = changed();
    const state = factState(doc.entities, NOW);
    const facts = factResults(doc, schema, 'budget', { now: NOW });
    const acu = { text: 'The user has a budget of 50 lakhs.', score: 0.99, confidence: 'high' as const, source: 'acu' as const, turnRefs: ['t1'], validAt: '2026-01-05T10:00:00Z' };
    const ranked = rankTiers({ facts, recent: [], acus: [acu] }, state, undefined);
    expect(ranked[0]?.fact?.value).toEqual(lakh(80));
    const acuOut = ranked.find((r) => r.source === 'acu')!;
    expect(acuOut.outdated).toEqual({ key: 'budget', now: lakh(80) });
    expect(acuOut.score).toBeLessThan(ranked[0]!.score);
  });
});
