import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { FieldDef } from '../../src/core/extraction-schema.ts';
import type { FactSource, FactValue, HotDocument, Role, Turn } from '../../src/core/types.ts';
import { estimateTokens } from '../../src/core/tokens.ts';
import { buildSessionContext, CONTEXT_BLOCK_TOKEN_BUDGET, refreshForRead } from '../../src/memory/context-block.ts';
import { applyFacts, type ResolvedFact } from '../../src/memory/supersession.ts';
import { formatValue } from '../../src/text/values.ts';

const HOUR = 3_600_000;
const NOW = Date.parse('2026-02-01T12:00:00Z');

const budget: FieldDef = { name: 'budget', category: 'temporal', type: 'money', description: 'Total budget' };
const area: FieldDef = { name: 'preferred_area', category: 'temporal', type: 'string', description: 'Area' };
const visit: FieldDef = { name: 'site_visit', category: 'ephemeral', type: 'datetime', description: 'Site visit', ttlHours: 24 };
const fullName: FieldDef = { name: 'full_name', category: 'profile', type: 'string', description: 'Name' };
const lakh = (n: number): FactValue => ({ amount: n * 100_000, currency: 'INR' });

function fact(field: FieldDef, value: FactValue, validFrom: string, evidence: string[], source: FactSource = 'explicit'): ResolvedFact {
  return { key: field.name, field, value, source, validFrom, evidence };
}

function turn(seq: number, text: string, role: Role = 'user', day = '2026-01-15'): Turn {
  const ts = Date.parse(`${day}T10:00:00Z`) + seq * 1000;
  return { turnId: `t${seq}`, seq, sessionId: 's1', role, text, ts, receivedAt: ts, tokens: estimateTokens(text), ...(role === 'user' ? { speaker: 'Rajiv Kumar' } : {}) };
}

function doc(facts: ResolvedFact[], recent: Turn[] = [], now = NOW): HotDocument {
  const merged = applyFacts({ entities: [], profile: {} }, facts, { now, defaultTtlHours: 24, idFor: (f) => `e:${f.key}:${JSON.stringify(f.value)}` });
  return {
    scope: { tenantId: `t-${randomUUID()}`, agentId: 'a', userId: 'u' },
    profile: merged.profile,
    entities: merged.entities,
    recent,
    summaries: [{ sessionId: 's0', text: 'Rajiv asked about 2BHK flats in Baner.', from: '2026-01-03T10:00:00Z', to: '2026-01-03T10:20:00Z' }],
    counters: { extractions: 1, turnsArchived: 0, acusIndexed: 0, acusSuppressed: 0 },
    version: 7,
    updatedAt: new Date(now).toISOString(),
  };
}

/** The lines of one `## Title` section of the block. */
function section(block: string, title: string): string[] {
  const lines = block.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`## ${title}`));
  if (start < 0) return [];
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

const basicFacts = () => [
  fact(fullName, 'Rajiv Kumar', '2026-01-03T10:00:00Z', ['t0']),
  fact(budget, lakh(50), '2026-01-03T10:00:00Z', ['t1']),
  fact(budget, lakh(80), '2026-01-15T10:00:03Z', ['t3']),
  fact(area, 'Baner', '2026-01-15T10:00:04Z', ['t4'], 'inferred'),
  fact(visit, '2026-02-01T12:00:00.000Z', '2026-01-15T10:00:05Z', ['t5']),
];

describe('buildSessionContext', () => {
  it('splits active facts by source and never shows superseded ones', () => {
    const ctx = buildSessionContext(doc(basicFacts()), { now: NOW, contextWindowTurns: 10 });
    expect(ctx.profile).toEqual({ full_name: 'Rajiv Kumar' });
    expect(ctx.facts.map((f) => f.key).sort()).toEqual(['budget', 'site_visit']);
    expect(ctx.facts.find((f) => f.key === 'budget')).toMatchObject({ value: lakh(80), source: 'explicit', validFrom: '2026-01-15T10:00:03Z' });
    expect(ctx.possibly.map((f) => [f.key, f.value])).toEqual([['preferred_area', 'Baner']]);

    const current = section(ctx.contextBlock, 'Current facts (explicit or confirmed — state them as true)');
    expect(current).toContain(`- budget: ${formatValue(lakh(80))} (since 2026-01-15)`);
    expect(ctx.contextBlock).not.toContain(formatValue(lakh(50)));
    expect(section(ctx.contextBlock, 'Possibly (inferred — ask or hedge, do not assert)')).toEqual([`- preferred area: ${formatValue('Baner')} (since 2026-01-15)`]);
    expect(section(ctx.contextBlock, 'Profile')).toEqual([`- full name: ${formatValue('Rajiv Kumar')}`]);
    expect(section(ctx.contextBlock, 'Earlier sessions')).toEqual(['- 2026-01-03: Rajiv asked about 2BHK flats in Baner.']);
    expect(ctx).toMatchObject({ version: 7, builtAt: NOW, expiresAt: NOW + 24 * HOUR });
  });

  it('hides expired ephemeral facts, and a cached context expires with them', () => {
    const d = doc(basicFacts());
    const fresh = buildSessionContext(d, { now: NOW, contextWindowTurns: 10 });
    expect(refreshForRead(fresh, NOW + 23 * HOUR)).toBe(fresh);
    expect(refreshForRead(fresh, NOW + 24 * HOUR)).toBeNull();

    const later = buildSessionContext(d, { now: NOW + 25 * HOUR, contextWindowTurns: 10 });
    expect(later.facts.map((f) => f.key)).toEqual(['budget']);
    expect(later.contextBlock).not.toContain('site visit:');
    expect(later.expiresAt).toBeNull();
    expect(refreshForRead(later, NOW + 1000 * HOUR)).toBe(later);
  });

  it('marks a recent turn that only evidences a superseded fact', () => {
    const recent = [turn(1, 'My budget is 50 lakh.'), turn(2, 'Noted.', 'agent'), turn(3, 'I got approved for 80 lakh!'), turn(4, 'Great news.', 'agent')];
    const ctx = buildSessionContext(doc(basicFacts(), recent), { now: NOW, contextWindowTurns: 10 });
    const lines = section(ctx.contextBlock, 'Recent conversation');
    expect(lines[0]).toBe(`- [2026-01-15] Rajiv Kumar (user): My budget is 50 lakh. [outdated: budget is now ${formatValue(lakh(80))}]`);
    expect(lines[1]).toBe('- [2026-01-15] agent: Noted.');
    expect(lines[2]).toBe('- [2026-01-15] Rajiv Kumar (user): I got approved for 80 lakh!');
    // The structured `recent` keeps the text verbatim and carries the mark beside it.
    expect(ctx.recent[0]).toEqual({ turnId: 't1', role: 'user', text: 'My budget is 50 lakh.', ts: recent[0]!.ts, speaker: 'Rajiv Kumar', outdated: [{ key: 'budget', now: lakh(80) }] });
    expect(ctx.recent[2]).not.toHaveProperty('outdated');
  });

  it('does not mark a turn that also evidences an active fact, and marks expired evidence', () => {
    const facts = [fact(budget, lakh(50), '2026-01-03T10:00:00Z', ['t1']), fact(budget, lakh(80), '2026-01-15T10:00:03Z', ['t1', 't3']), fact(visit, 'tomorrow 10am', '2026-01-15T10:00:05Z', ['t5'])];
    const recent = [turn(1, 'It was 50, now it is 80.'), turn(5, 'Visit tomorrow at 10.')];
    const ctx = buildSessionContext(doc(facts, recent), { now: NOW + 48 * HOUR, contextWindowTurns: 10 });
    const lines = section(ctx.contextBlock, 'Recent conversation');
    expect(lines[0]).not.toContain('[outdated');
    expect(lines[1]).toContain('[outdated: site visit has expired]');
  });

  it('puts a mark after the sentence that states the stale value, and marks no line that also states the current one', () => {
    const facts = [fact(budget, lakh(50), '2026-01-03T10:00:00Z', ['t1']), fact(area, 'Baner', '2026-01-03T10:00:00Z', ['t1']), fact(budget, lakh(80), '2026-01-15T10:00:03Z', ['t3'])];
    const recent = [turn(1, 'My budget is 50 lakh. I want a flat in Baner.'), turn(2, 'Any news?', 'agent'), turn(3, 'It went up from 50 lakh to 80 lakh.')];
    const ctx = buildSessionContext(doc(facts, recent), { now: NOW, contextWindowTurns: 10 });
    const lines = section(ctx.contextBlock, 'Recent conversation');
    expect(lines[0]).toBe(`- [2026-01-15] Rajiv Kumar (user): My budget is 50 lakh. [outdated: budget is now ${formatValue(lakh(80))}] I want a flat in Baner.`);
    expect(lines[2]).toBe('- [2026-01-15] Rajiv Kumar (user): It went up from 50 lakh to 80 lakh.');
  });

  it('does not mark a turn that told of an ephemeral value already past when it was said', () => {
    const moveIn: FieldDef = { name: 'move_in_date', category: 'ephemeral', type: 'date', description: 'Move-in date', ttlHours: 24 };
    // Said on 2026-01-15 about 2026-01-10: history when said, and still true.
    const facts = [fact(moveIn, '2026-01-10', '2026-01-15T10:00:01Z', ['t1']), fact(visit, '2026-01-20T10:00:00Z', '2026-01-15T10:00:02Z', ['t2'])];
    const recent = [turn(1, 'I moved in on 10 January.'), turn(2, 'Let us visit on 20 January at 10.')];
    const ctx = buildSessionContext(doc(facts, recent), { now: Date.parse('2026-02-01T12:00:00Z'), contextWindowTurns: 10 });
    const lines = section(ctx.contextBlock, 'Recent conversation');
    expect(lines[0]).toBe('- [2026-01-15] Rajiv Kumar (user): I moved in on 10 January.');
    expect(lines[1]).toContain('[outdated: site visit has expired]');
  });

  it('merges buffered turns with kept ones: deduplicated, seq order, last N', () => {
    const kept = [turn(1, 'one'), turn(2, 'two', 'agent'), turn(3, 'three')];
    const buffered = [turn(3, 'three'), turn(4, 'four', 'agent'), turn(5, 'five')];
    const ctx = buildSessionContext(doc([], kept), { now: NOW, contextWindowTurns: 4, bufferedTurns: [...buffered].reverse() });
    expect(ctx.recent.map((t) => t.turnId)).toEqual(['t2', 't3', 't4', 't5']);
    expect(section(ctx.contextBlock, 'Recent conversation')).toHaveLength(4);
  });

  it('says that an agent turn cut off by barge-in was interrupted instead of showing half a question', () => {
    const cut = { ...turn(1, 'Lovely. Which area are you considering, and what is your', 'agent'), interrupted: true };
    const ctx = buildSessionContext(doc([], [cut, turn(2, 'Whitefield.')]), { now: NOW, contextWindowTurns: 4 });
    expect(section(ctx.contextBlock, 'Recent conversation')).toEqual([
      '- [2026-01-15] agent: Lovely. Which area are you considering, and what is your… (interrupted)',
      '- [2026-01-15] Rajiv Kumar (user): Whitefield.',
    ]);
    expect(ctx.recent[0]).toMatchObject({ turnId: 't1', interrupted: true });
    expect(ctx.recent[1]).not.toHaveProperty('interrupted');
  });

  it('offers the memory_search tool', () => {
    const ctx = buildSessionContext(null, { now: NOW, contextWindowTurns: 10 });
    expect(ctx.tools).toHaveLength(1);
    expect(ctx.tools[0]).toMatchObject({ type: 'function', function: { name: 'memory_search', parameters: { type: 'object', required: ['query'] } } });
    expect(ctx.tools[0]!.function.description).toMatch(/ONLY when/);
  });

  it('builds an empty context without a hot document', () => {
    const ctx = buildSessionContext(null, { now: NOW, contextWindowTurns: 10, bufferedTurns: [turn(1, 'hello')] });
    expect(ctx).toMatchObject({ profile: {}, facts: [], possibly: [], summaries: [], version: 0, expiresAt: null });
    expect(ctx.recent.map((t) => t.turnId)).toEqual(['t1']);
    expect(section(ctx.contextBlock, 'Recent conversation')).toHaveLength(1);
    expect(buildSessionContext(null, { now: NOW, contextWindowTurns: 10 }).contextBlock).toContain('Nothing remembered yet');
  });

  it('stays within the token budget for a rich user', () => {
    const many: ResolvedFact[] = [];
    for (let i = 0; i < 30; i++) {
      const f: FieldDef = { name: `profile_field_${i}`, category: 'profile', type: 'string', description: 'x' };
      many.push(fact(f, `a fairly long profile value number ${i} with some detail`, '2026-01-03T10:00:00Z', [`p${i}`]));
      const t: FieldDef = { name: `temporal_field_${i}`, category: 'temporal', type: 'string', description: 'x' };
      many.push(fact(t, `a temporal value ${i} `.repeat(10), '2026-01-10T10:00:00Z', [`q${i}`], i % 3 === 0 ? 'inferred' : 'explicit'));
    }
    const recent = Array.from({ length: 12 }, (_, i) => turn(i + 1, `This is a long turn number ${i} `.repeat(20), i % 2 ? 'agent' : 'user'));
    const d = doc(many, recent);
    d.summaries = Array.from({ length: 6 }, (_, i) => ({ sessionId: `s${i}`, text: `Summary of session ${i} `.repeat(30), from: `2026-01-0${i + 1}T10:00:00Z`, to: `2026-01-0${i + 1}T11:00:00Z` }));
    const ctx = buildSessionContext(d, { now: NOW, contextWindowTurns: 10 });
    expect(estimateTokens(ctx.contextBlock)).toBeLessThanOrEqual(CONTEXT_BLOCK_TOKEN_BUDGET);
    expect(ctx.facts.length + ctx.possibly.length).toBe(30);
    expect(section(ctx.contextBlock, 'Recent conversation').length).toBeGreaterThanOrEqual(4);
    // The newest turn always survives trimming.
    expect(section(ctx.contextBlock, 'Recent conversation').at(-1)).toContain('number 11');
  });
});

describe('buildSessionContext: one fact-state model in every section', () => {
  it('annotates a summary that states a superseded value, keeps the current one plain, and lists a waiting candidate under possibly', () => {
    const facts = [
      fact(budget, lakh(50), '2026-01-03T10:00:00Z', ['t1']),
      fact(budget, lakh(80), '2026-01-15T10:00:03Z', ['t9']),
      { ...fact(budget, lakh(18), '2026-01-16T10:00:00Z', ['t12']), source: 'inferred' as const, statedAt: '2026-01-16T10:00:00Z' },
    ];
    const d = doc(facts, []);
    d.summaries = [{ sessionId: 's1', text: 'Rajiv Kumar said his budget is 50 lakhs rupees for a 3BHK in Pune.', from: '2026-01-03T10:00:00Z', to: '2026-01-03T10:10:00Z' }];
    const ctx = buildSessionContext(d, { now: NOW, contextWindowTurns: 10 });
    expect(ctx.facts.map((f) => f.value)).toEqual([lakh(80)]);
    expect(ctx.possibly.map((f) => f.value)).toEqual([lakh(18)]);
    expect(ctx.summaries[0]?.text).toBe(`Rajiv Kumar said his budget is 50 lakhs rupees for a 3BHK in Pune. [outdated: budget is now ${formatValue(lakh(80))}]`);
    expect(section(ctx.contextBlock, 'Earlier sessions')[0]).toMatch(/50 lakhs rupees.*\[outdated: budget is now ₹80 lakh/);
  });
});
