import { describe, expect, it } from 'vitest';
import type { FieldDef } from '../../src/core/extraction-schema.ts';
import type { FactSource, FactValue, ProfileEntry, TemporalEntity } from '../../src/core/types.ts';
import { activeEntities, applyFacts, chainOf, isExpired, type MemoryState, type ResolvedFact } from '../../src/memory/supersession.ts';

const HOUR = 3_600_000;
const NOW = Date.parse('2026-02-01T12:00:00Z');

const budget: FieldDef = { name: 'budget', category: 'temporal', type: 'money', description: 'Total budget' };
const visit: FieldDef = { name: 'site_visit', category: 'ephemeral', type: 'datetime', description: 'Site visit', ttlHours: 24 };
const city: FieldDef = { name: 'city', category: 'profile', type: 'string', description: 'City' };

const empty = (): MemoryState => ({ entities: [], profile: {} });
const lakh = (n: number): FactValue => ({ amount: n * 100_000, currency: 'INR' });

function fact(field: FieldDef, value: FactValue, validFrom: string, evidence: string[], source: FactSource = 'explicit'): ResolvedFact {
  return { key: field.name, field, value, source, validFrom, evidence };
}

const opts = (now = NOW) => ({ now, defaultTtlHours: 24, idFor: (f: ResolvedFact) => `id:${f.key}:${JSON.stringify(f.value)}:${f.validFrom}` });

function byValue(entities: TemporalEntity[], amountLakh: number): TemporalEntity {
  const e = entities.find((x) => typeof x.value === 'object' && x.value.amount === amountLakh * 100_000);
  if (!e) throw new Error(`no record for ${amountLakh} lakh`);
  return e;
}

describe('applyFacts: temporal supersession', () => {
  it('supersedes a changed value and links both records', () => {
    const first = applyFacts(empty(), [fact(budget, lakh(50), '2026-01-03T10:00:00Z', ['t1'])], opts());
    const second = applyFacts(first, [fact(budget, lakh(80), '2026-01-15T10:00:00Z', ['t9'])], opts(NOW + HOUR));

    expect(second.entities).toHaveLength(2);
    const old = byValue(second.entities, 50);
    const cur = byValue(second.entities, 80);
    expect(old).toMatchObject({ status: 'superseded', validUntil: '2026-01-15T10:00:00Z', supersededBy: cur.id });
    expect(cur).toMatchObject({ status: 'active', validUntil: null, supersedes: old.id, recordedAt: new Date(NOW + HOUR).toISOString(), expiresAt: null, evidence: ['t9'] });
    expect(second.inserted.map((e) => e.id)).toEqual([cur.id]);
    expect(second.superseded.map((e) => e.id)).toEqual([old.id]);
    expect(activeEntities(second.entities, NOW).map((e) => e.id)).toEqual([cur.id]);
  });

  it('never mutates its input', () => {
    const first = applyFacts(empty(), [fact(budget, lakh(50), '2026-01-03T10:00:00Z', ['t1'])], opts());
    const snapshot = structuredClone(first.entities);
    applyFacts(first, [fact(budget, lakh(80), '2026-01-15T10:00:00Z', ['t9'])], opts());
    expect(first.entities).toEqual(snapshot);
  });

  it('keeps one record for the same value, appending evidence and upgrading an inferred source', () => {
    const first = applyFacts(empty(), [fact(budget, lakh(80), '2026-01-15T10:00:00Z', ['t1'], 'inferred')], opts());
    const again = applyFacts(first, [fact(budget, lakh(80), '2026-01-20T10:00:00Z', ['t2', 't1', 't2'], 'explicit')], opts());
    expect(again.entities).toHaveLength(1);
    expect(again.entities[0]).toMatchObject({ status: 'active', source: 'explicit', evidence: ['t1', 't2'], validFrom: '2026-01-15T10:00:00Z' });
    expect(again.inserted).toEqual([]);
    expect(again.superseded).toEqual([]);
  });

  it('does not downgrade an explicit record when the same value is inferred later', () => {
    const first = applyFacts(empty(), [fact(budget, lakh(80), '2026-01-15T10:00:00Z', ['t1'])], opts());
    const again = applyFacts(first, [fact(budget, lakh(80), '2026-01-16T10:00:00Z', ['t2'], 'inferred')], opts());
    expect(again.entities[0]?.source).toBe('explicit');
  });

  it('is idempotent: re-applying the same facts changes nothing', () => {
    const facts = [
      fact(budget, lakh(50), '2026-01-03T10:00:00Z', ['t1']),
      fact(budget, lakh(80), '2026-01-15T10:00:00Z', ['t9']),
      fact(city, 'Pune', '2026-01-03T10:00:00Z', ['t1']),
      fact(visit, '2026-01-20T10:00:00.000Z', '2026-01-15T10:00:00Z', ['t9']),
    ];
    const once = applyFacts(empty(), facts, opts());
    const twice = applyFacts(once, facts, opts(NOW + 5 * HOUR));
    expect(twice.entities).toEqual(once.entities);
    expect(twice.profile).toEqual(once.profile);
    expect(twice.inserted).toEqual([]);
    expect(twice.superseded).toEqual([]);
    expect(twice.profileUpdated).toEqual([]);
  });

  it('re-reading an old value from a kept turn does not flip the current value back', () => {
    const once = applyFacts(empty(), [fact(budget, lakh(50), '2026-01-03T10:00:00Z', ['t1']), fact(budget, lakh(80), '2026-01-15T10:00:00Z', ['t9'])], opts());
    const reread = applyFacts(once, [fact(budget, lakh(50), '2026-01-03T10:00:00Z', ['t1'])], opts());
    expect(reread.entities).toEqual(once.entities);
  });

  it('keeps ids unique when a value comes back (idFor without world time)', () => {
    const byKeyValue = { ...opts(), idFor: (f: ResolvedFact) => `id:${f.key}:${JSON.stringify(f.value)}` };
    const out = applyFacts(
      empty(),
      [fact(budget, lakh(50), '2026-01-01T00:00:00Z', ['t1']), fact(budget, lakh(80), '2026-01-10T00:00:00Z', ['t2']), fact(budget, lakh(50), '2026-01-20T00:00:00Z', ['t3'])],
      byKeyValue,
    );
    const ids = out.entities.map((e) => e.id);
    expect(new Set(ids).size).toBe(3);
    expect(chainOf(out.entities, 'budget').map((e) => [e.status, e.evidence])).toEqual([
      ['superseded', ['t1']],
      ['superseded', ['t2']],
      ['active', ['t3']],
    ]);
    expect(out.superseded.map((e) => e.evidence)).toEqual([['t1'], ['t2']]);
  });

  it('processes a batch in world-time order whatever the input order', () => {
    const out = applyFacts(empty(), [fact(budget, lakh(80), '2026-01-15T10:00:00Z', ['t9']), fact(budget, lakh(50), '2026-01-03T10:00:00Z', ['t1'])], opts());
    expect(byValue(out.entities, 80).status).toBe('active');
    expect(byValue(out.entities, 50)).toMatchObject({ status: 'superseded', supersededBy: byValue(out.entities, 80).id });
  });
});

describe('applyFacts: out-of-order world times', () => {
  const base = () => applyFacts(empty(), [fact(budget, lakh(50), '2026-01-01T00:00:00Z', ['t1']), fact(budget, lakh(80), '2026-01-20T00:00:00Z', ['t9'])], opts());

  it('inserts an older, different value as history without replacing the current value', () => {
    const late = applyFacts(base(), [fact(budget, lakh(60), '2026-01-10T00:00:00Z', ['t5'])], opts(NOW + HOUR));
    const [v50, v60, v80] = [byValue(late.entities, 50), byValue(late.entities, 60), byValue(late.entities, 80)];
    expect(v80).toMatchObject({ status: 'active', supersedes: v60.id, validUntil: null });
    expect(v60).toMatchObject({ status: 'superseded', supersedes: v50.id, supersededBy: v80.id, validUntil: '2026-01-20T00:00:00Z' });
    expect(v50).toMatchObject({ status: 'superseded', supersededBy: v60.id, validUntil: '2026-01-10T00:00:00Z' });
    expect(chainOf(late.entities, 'budget').map((e) => e.id)).toEqual([v50.id, v60.id, v80.id]);
    expect(late.inserted.map((e) => e.id)).toEqual([v60.id]);
    expect(late.superseded).toEqual([]);
  });

  it('inserts a value older than the whole chain at its head', () => {
    const late = applyFacts(base(), [fact(budget, lakh(40), '2025-12-01T00:00:00Z', ['t0'])], opts());
    const [v40, v50] = [byValue(late.entities, 40), byValue(late.entities, 50)];
    expect(v40).toMatchObject({ status: 'superseded', supersedes: null, supersededBy: v50.id, validUntil: '2026-01-01T00:00:00Z' });
    expect(v50.supersedes).toBe(v40.id);
    expect(byValue(late.entities, 80).status).toBe('active');
  });

  it('starts the current value earlier when a late fact shows it held before', () => {
    const late = applyFacts(base(), [fact(budget, lakh(80), '2026-01-12T00:00:00Z', ['t6'])], opts());
    expect(late.entities).toHaveLength(2);
    expect(byValue(late.entities, 80)).toMatchObject({ status: 'active', validFrom: '2026-01-12T00:00:00Z', evidence: ['t9', 't6'] });
    expect(byValue(late.entities, 50).validUntil).toBe('2026-01-12T00:00:00Z');
  });

  it('confirms the value in force at that time instead of repeating it', () => {
    const late = applyFacts(base(), [fact(budget, lakh(50), '2026-01-05T00:00:00Z', ['t2'])], opts());
    expect(late.entities).toHaveLength(2);
    expect(byValue(late.entities, 50).evidence).toEqual(['t1', 't2']);
  });
});

describe('applyFacts: ephemeral expiry', () => {
  it('hides a dated ephemeral fact TTL hours after the moment it is about, but keeps it in the timeline', () => {
    const out = applyFacts(empty(), [fact(visit, '2026-02-03T10:00:00.000Z', '2026-01-10T00:00:00Z', ['t3'])], opts());
    const rec = out.entities[0]!;
    const visitEnds = Date.parse('2026-02-03T10:00:00.000Z') + 24 * HOUR;
    expect(rec.expiresAt).toBe(new Date(visitEnds).toISOString());
    expect(activeEntities(out.entities, visitEnds - HOUR)).toHaveLength(1);
    expect(isExpired(rec, visitEnds)).toBe(true);
    expect(activeEntities(out.entities, visitEnds)).toEqual([]);
    expect(out.entities).toHaveLength(1);
    expect(rec.status).toBe('active');
  });

  it('an undated ephemeral value lasts the default TTL from when it was said (world time, not extraction time), renewed when restated', () => {
    const noTtl: FieldDef = { ...visit, ttlHours: undefined };
    delete noTtl.ttlHours;
    const out = applyFacts(empty(), [fact(noTtl, 'call back', '2026-02-01T00:00:00Z', ['t1'])], { ...opts(), defaultTtlHours: 2 });
    expect(out.entities[0]?.expiresAt).toBe('2026-02-01T02:00:00.000Z');
    const restated = applyFacts(out, [fact(noTtl, 'call back', '2026-02-01T03:00:00Z', ['t2'])], { ...opts(NOW + 3 * HOUR), defaultTtlHours: 2 });
    expect(restated.entities).toHaveLength(1);
    expect(restated.entities[0]?.expiresAt).toBe('2026-02-01T05:00:00.000Z');
  });

  it('non-ephemeral records never expire', () => {
    const out = applyFacts(empty(), [fact(budget, lakh(80), '2026-01-15T10:00:00Z', ['t1'])], opts());
    expect(out.entities[0]?.expiresAt).toBeNull();
    expect(activeEntities(out.entities, NOW + 10_000 * HOUR)).toHaveLength(1);
  });
});

describe('applyFacts: profile', () => {
  it('last write wins by world time, with every value kept on the timeline', () => {
    const a = applyFacts(empty(), [fact(city, 'Pune', '2026-01-03T00:00:00Z', ['t1'])], opts());
    expect(a.profile.city).toEqual({ value: 'Pune', updatedAt: '2026-01-03T00:00:00Z', source: 'explicit', evidence: ['t1'] });
    expect(a.profileUpdated).toEqual(['city']);

    const b = applyFacts(a, [fact(city, 'Mumbai', '2026-01-10T00:00:00Z', ['t4'])], opts());
    expect(b.profile.city?.value).toBe('Mumbai');
    expect(b.profileUpdated).toEqual(['city']);

    const older = applyFacts(b, [fact(city, 'Nashik', '2026-01-05T00:00:00Z', ['t2'])], opts());
    expect(older.profile.city?.value).toBe('Mumbai');
    expect(older.profileUpdated).toEqual([]);

    const timeline = chainOf(older.entities, 'city');
    expect(timeline.map((e) => [e.value, e.status, e.category])).toEqual([
      ['Pune', 'superseded', 'profile'],
      ['Nashik', 'superseded', 'profile'],
      ['Mumbai', 'active', 'profile'],
    ]);
  });

  it('orders a profile entry written before the timeline existed by its world time', () => {
    const legacy: Record<string, ProfileEntry> = { city: { value: 'Delhi', updatedAt: '2026-01-20T00:00:00Z', source: 'explicit', evidence: ['t0'] } };
    const out = applyFacts({ entities: [], profile: legacy }, [fact(city, 'Pune', '2026-01-03T00:00:00Z', ['t1'])], opts());
    expect(out.profile.city?.value).toBe('Delhi');
    expect(chainOf(out.entities, 'city').map((e) => e.value)).toEqual(['Pune', 'Delhi']);
  });
});

/** docs/protocol.md "Memory semantics": the newest statement is current; validFrom only places it on the world-time line. */
describe('applyFacts: change vs correction', () => {
  const said = (f: ResolvedFact, statedAt: string, correction = false): ResolvedFact => ({ ...f, statedAt, ...(correction ? { correction } : {}) });

  it('a later statement with an earlier validFrom retracts the current value ("moved there last month")', () => {
    const a = applyFacts(empty(), [said(fact(city, 'Chennai', '2026-02-10T09:00:00Z', ['c1']), '2026-02-10T09:00:00Z')], opts());
    const b = applyFacts(a, [said(fact(city, 'Mysore', '2026-01-20T09:00:00Z', ['c2']), '2026-02-20T09:00:00Z')], opts(NOW + HOUR));
    const chennai = b.entities.find((e) => e.value === 'Chennai')!;
    const mysore = b.entities.find((e) => e.value === 'Mysore')!;
    expect(mysore).toMatchObject({ status: 'active', validFrom: '2026-01-20T09:00:00Z', supersedes: chennai.id, validUntil: null });
    expect(chennai).toMatchObject({ status: 'retracted', supersededBy: mysore.id });
    expect(b.profile.city?.value).toBe('Mysore');
    expect(b.retracted.map((e) => e.id)).toEqual([chennai.id]);
    expect(b.superseded).toEqual([]);
  });

  it('a correction cue retracts even when validFrom is later', () => {
    const a = applyFacts(empty(), [said(fact(budget, lakh(12), '2026-01-03T10:00:00Z', ['t1']), '2026-01-03T10:00:00Z')], opts());
    const b = applyFacts(a, [said(fact(budget, lakh(21), '2026-01-03T10:05:00Z', ['t2']), '2026-01-03T10:05:00Z', true)], opts());
    expect(byValue(b.entities, 12)).toMatchObject({ status: 'retracted', supersededBy: byValue(b.entities, 21).id });
    expect(byValue(b.entities, 21).status).toBe('active');
  });

  it('a later validFrom without a cue supersedes, with validUntil = the new validFrom', () => {
    const a = applyFacts(empty(), [said(fact(budget, lakh(50), '2026-01-03T10:00:00Z', ['t1']), '2026-01-03T10:00:00Z')], opts());
    const b = applyFacts(a, [said(fact(budget, lakh(80), '2026-01-20T10:00:00Z', ['t2']), '2026-01-20T10:00:00Z')], opts());
    expect(byValue(b.entities, 50)).toMatchObject({ status: 'superseded', validUntil: '2026-01-20T10:00:00Z' });
  });
});

describe('applyFacts: confidence order', () => {
  const at = (f: ResolvedFact, statedAt: string): ResolvedFact => ({ ...f, statedAt });
  const confirmed80 = () => applyFacts(empty(), [at(fact(budget, lakh(80), '2026-01-10T10:00:00Z', ['t1'], 'confirmed'), '2026-01-10T10:00:00Z')], opts());

  it('an inferred value never supersedes a confirmed one: it waits beside it as a candidate', () => {
    const b = applyFacts(confirmed80(), [at(fact(budget, lakh(18), '2026-01-20T10:00:00Z', ['t2'], 'inferred'), '2026-01-20T10:00:00Z')], opts());
    expect(byValue(b.entities, 80)).toMatchObject({ status: 'active', source: 'confirmed' });
    expect(byValue(b.entities, 18)).toMatchObject({ status: 'active', source: 'inferred', supersedes: null });
    expect(b.superseded).toEqual([]);
    expect(b.retracted).toEqual([]);
  });

  it('a later explicit restatement of the current value settles the candidate (retracted)', () => {
    const b = applyFacts(confirmed80(), [at(fact(budget, lakh(18), '2026-01-20T10:00:00Z', ['t2'], 'inferred'), '2026-01-20T10:00:00Z')], opts());
    const c = applyFacts(b, [at(fact(budget, lakh(80), '2026-01-21T10:00:00Z', ['t3']), '2026-01-21T10:00:00Z')], opts());
    expect(byValue(c.entities, 18)).toMatchObject({ status: 'retracted', supersededBy: byValue(c.entities, 80).id });
    expect(activeEntities(c.entities, NOW).map((e) => e.value)).toEqual([lakh(80)]);
  });

  it('a later explicit statement of the candidate value promotes it and replaces the old value', () => {
    const b = applyFacts(confirmed80(), [at(fact(budget, lakh(90), '2026-01-20T10:00:00Z', ['t2'], 'inferred'), '2026-01-20T10:00:00Z')], opts());
    const c = applyFacts(b, [at(fact(budget, lakh(90), '2026-01-22T10:00:00Z', ['t3']), '2026-01-22T10:00:00Z')], opts());
    const v90 = byValue(c.entities, 90);
    expect(v90).toMatchObject({ status: 'active', source: 'explicit', evidence: ['t2', 't3'], supersedes: byValue(c.entities, 80).id });
    expect(byValue(c.entities, 80)).toMatchObject({ status: 'superseded', supersededBy: v90.id });
  });

  it("an explicit change still replaces a confirmed value (a new statement is the user's own word)", () => {
    const c = applyFacts(confirmed80(), [at(fact(budget, lakh(100), '2026-02-01T10:00:00Z', ['t3']), '2026-02-01T10:00:00Z')], opts());
    expect(byValue(c.entities, 80).status).toBe('superseded');
    expect(byValue(c.entities, 100).status).toBe('active');
  });

  it('a newer hedge replaces an older candidate, never the current value', () => {
    const b = applyFacts(confirmed80(), [at(fact(budget, lakh(60), '2026-01-20T10:00:00Z', ['t2'], 'inferred'), '2026-01-20T10:00:00Z')], opts());
    const c = applyFacts(b, [at(fact(budget, lakh(65), '2026-01-21T10:00:00Z', ['t3'], 'inferred'), '2026-01-21T10:00:00Z')], opts());
    expect(byValue(c.entities, 60).status).toBe('retracted');
    expect(activeEntities(c.entities, NOW).map((e) => [e.value, e.source])).toEqual([
      [lakh(80), 'confirmed'],
      [lakh(65), 'inferred'],
    ]);
  });
});

/** "I stopped taking metformin": a value that no longer holds, with nothing in its place. */
describe('applyFacts: an ended value', () => {
  const medication: FieldDef = { name: 'medication', category: 'temporal', type: 'string', description: 'Medication' };
  const employer: FieldDef = { name: 'employer', category: 'profile', type: 'string', description: 'Employer' };
  const ended = (f: ResolvedFact): ResolvedFact => ({ ...f, ended: true });

  it('ends the current record where the statement puts it, with no successor; restating it later starts a new one', () => {
    const a = applyFacts(empty(), [fact(medication, 'metformin', '2026-01-05T10:00:00Z', ['m1'])], opts());
    const b = applyFacts(a, [ended(fact(medication, 'metformin', '2026-01-29T00:00:00Z', ['m2']))], opts());
    const rec = b.entities.find((e) => e.value === 'metformin')!;
    expect(rec).toMatchObject({ status: 'superseded', validUntil: '2026-01-29T00:00:00Z', supersededBy: null, evidence: ['m1', 'm2'] });
    expect(b.superseded.map((e) => e.id)).toEqual([rec.id]);
    expect(activeEntities(b.entities, NOW)).toEqual([]);
    expect(applyFacts(b, [ended(fact(medication, 'metformin', '2026-01-29T00:00:00Z', ['m2']))], opts()).entities).toEqual(b.entities);
    const c = applyFacts(b, [fact(medication, 'metformin', '2026-03-01T00:00:00Z', ['m3'])], opts());
    expect(chainOf(c.entities, 'medication').map((e) => e.status)).toEqual(['superseded', 'active']);
  });

  it('changes nothing when the ended value is not the current one', () => {
    const a = applyFacts(empty(), [fact(medication, 'metformin', '2026-01-05T10:00:00Z', ['m1'])], opts());
    const b = applyFacts(a, [ended(fact(medication, 'ibuprofen', '2026-01-20T00:00:00Z', ['m2']))], opts());
    expect(b.entities).toEqual(a.entities);
    expect(b.superseded).toEqual([]);
  });

  it('drops the profile projection of an ended profile value', () => {
    const a = applyFacts(empty(), [fact(employer, 'Infosys', '2026-01-05T10:00:00Z', ['e1'])], opts());
    const b = applyFacts(a, [ended(fact(employer, 'Infosys', '2026-01-20T00:00:00Z', ['e2']))], opts());
    expect(b.profile.employer).toBeUndefined();
    expect(b.profileUpdated).toEqual(['employer']);
  });
});
