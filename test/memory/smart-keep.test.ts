import { describe, expect, it } from 'vitest';
import type { Role, Turn } from '../../src/core/types.ts';
import { factDensity, isQuestion, SMART_KEEP_THRESHOLD, smartKeep } from '../../src/memory/smart-keep.ts';

const weights = { recency: 0.5, question: 0.3, density: 0.2 };
const T0 = Date.parse('2026-01-05T10:00:00Z');

function turns(texts: string[]): Turn[] {
  return texts.map((text, i) => {
    const role: Role = i % 2 === 0 ? 'user' : 'agent';
    return { turnId: `turn-${i + 1}`, seq: i + 1, sessionId: 's1', role, text, ts: T0 + i * 5000, receivedAt: T0 + i * 5000, tokens: 10 };
  });
}

describe('smartKeep', () => {
  it('always keeps the last minKeptTurns, whatever their score', () => {
    const ts = turns(['What is the budget for the Baner flat?', 'It is ₹80 lakh.', 'ok', 'ok', 'ok', 'ok']);
    const out = smartKeep(ts, { minKeptTurns: 2, maxKeptTurns: 2, weights });
    expect(out.kept.map((t) => t.seq)).toEqual([5, 6]);
    expect(out.window.map((t) => t.seq)).toEqual([1, 2, 3, 4]);
  });

  it('favours an open question over plain turns of the same age', () => {
    // The user's question at 5 has had no answer yet (only the user spoke after it).
    const ts = turns(['ok fine', 'sure', 'ok', 'noted', 'Can you send me the brochure?']).map((t) => ({ ...t, role: t.seq >= 5 ? ('user' as const) : t.role }));
    ts.push({ ...ts[4]!, turnId: 'turn-6', seq: 6, text: 'and the floor plan', ts: ts[4]!.ts + 5000 }, { ...ts[4]!, turnId: 'turn-7', seq: 7, text: 'thanks', ts: ts[4]!.ts + 10000 });
    const out = smartKeep(ts, { minKeptTurns: 1, maxKeptTurns: 2, weights });
    expect(out.kept.map((t) => t.seq)).toEqual([5, 7]);
    expect(out.scores.get('turn-5')!).toBeGreaterThan(out.scores.get('turn-6')!);
  });

  it('lets an answered question leave with its answer, so they are compressed together', () => {
    const ts = turns(['ok fine', 'sure', 'Can you send me the brochure?', 'Yes, I will email it today.', 'thanks', 'noted', 'ok', 'bye']);
    const out = smartKeep(ts, { minKeptTurns: 2, maxKeptTurns: 3, weights });
    expect(out.window.map((t) => t.seq)).toEqual(expect.arrayContaining([3, 4]));
    expect(out.kept.map((t) => t.seq)).not.toContain(3);
  });

  it('keeps only turns above the threshold beyond the minimum', () => {
    const ts = turns(['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
    const out = smartKeep(ts, { minKeptTurns: 0, maxKeptTurns: 8, weights });
    for (const t of out.kept) expect(out.scores.get(t.turnId)!).toBeGreaterThan(SMART_KEEP_THRESHOLD);
    for (const t of out.window) expect(out.scores.get(t.turnId)!).toBeLessThanOrEqual(SMART_KEEP_THRESHOLD);
    expect(out.kept.map((t) => t.seq)).toEqual([9, 10]);
  });

  it('returns both lists in seq order and partitions every turn', () => {
    const ts = turns(['Hi, I am Rajiv Kumar from Pune.', 'Welcome!', 'Is the Baner flat still available?', 'Yes it is.', 'ok', 'My budget is ₹80 lakh, approved on 12 March.', 'Noted.', 'thanks']);
    const shuffled = [...ts].reverse();
    const out = smartKeep(shuffled, { minKeptTurns: 2, maxKeptTurns: 5, weights });
    const seqs = (l: Turn[]) => l.map((t) => t.seq);
    expect(seqs(out.kept)).toEqual([...seqs(out.kept)].sort((a, b) => a - b));
    expect(seqs(out.window)).toEqual([...seqs(out.window)].sort((a, b) => a - b));
    expect([...seqs(out.kept), ...seqs(out.window)].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(out.kept.length).toBeLessThanOrEqual(5);
    expect(out.scores.size).toBe(8);
  });

  it('keeps everything when there are fewer turns than the minimum', () => {
    const ts = turns(['hello', 'hi']);
    const out = smartKeep(ts, { minKeptTurns: 4, maxKeptTurns: 8, weights });
    expect(out.kept).toHaveLength(2);
    expect(out.window).toEqual([]);
  });

  it('scores newer turns higher, all else equal', () => {
    const out = smartKeep(turns(['ok', 'ok', 'ok']), { minKeptTurns: 0, maxKeptTurns: 0, weights });
    expect(out.scores.get('turn-1')!).toBeLessThan(out.scores.get('turn-2')!);
    expect(out.scores.get('turn-2')!).toBeLessThan(out.scores.get('turn-3')!);
    expect(out.kept).toEqual([]);
  });
});

describe('smart keep features', () => {
  it('recognises questions with or without a question mark', () => {
    expect(isQuestion('what is my budget')).toBe(true);
    expect(isQuestion('Okay. Could you call me tomorrow')).toBe(true);
    expect(isQuestion('Is it ready?')).toBe(true);
    expect(isQuestion('My budget is 80 lakh.')).toBe(false);
  });

  it('measures named entities, numbers, money and dates per token', () => {
    expect(factDensity('okay thanks')).toBe(0);
    expect(factDensity('I think so')).toBe(0);
    expect(factDensity('Rajiv Kumar wants the flat near Baner for ₹80 lakh on 12 March')).toBe(1);
    const some = factDensity('we spoke about the flat near Baner last week and it seemed nice enough overall');
    expect(some).toBeGreaterThan(0);
    expect(some).toBeLessThan(1);
  });
});
