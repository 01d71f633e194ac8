import { describe, expect, it } from 'vitest';
import type { Turn } from '../../src/core/types.ts';
import type { CosineScale } from '../../src/ports/embedder.ts';
import { FIELD_MATCH_SCORE, WEAK_MATCH_SCORE } from '../../src/memory/fact-search.ts';
import { fieldsByMeaning, recentByMeaning, strength } from '../../src/memory/semantic-match.ts';
import type { SemanticVectors } from '../../src/memory/semantic-tiers.ts';

const scale: CosineScale = { meaning: true, floor: 0.2, strong: 0.4 };
const Q = Float32Array.from([1, 0]);
/** A unit vector whose cosine with Q is `c`. */
const at = (c: number) => Float32Array.from([c, Math.sqrt(1 - c * c)]);
const clock = { now: Date.parse('2026-01-06T00:00:00Z') };

let seq = 0;
function turn(role: 'user' | 'agent', text: string): Turn {
  seq++;
  const ts = Date.parse('2026-01-05T10:00:00Z') + seq * 1000;
  return { turnId: `t${seq}`, seq, sessionId: 's1', role, text, ts, receivedAt: ts, tokens: 5 };
}
const vectors = (turns: Array<[Turn, number]>, fields: Array<[string, number]> = []): SemanticVectors => ({
  scale,
  fields: new Map(fields.map(([f, c]) => [f, at(c)])),
  turns: new Map(turns.map(([t, c]) => [t.turnId, at(c)])),
});

describe('strength', () => {
  it('is null up to the floor, rises to 1 at strong, and stays there', () => {
    expect(strength(0.2, scale)).toBeNull();
    expect(strength(0.3, scale)).toBeCloseTo(0.5, 6);
    expect(strength(0.4, scale)).toBe(1);
    expect(strength(0.9, scale)).toBe(1);
  });
});

describe('fieldsByMeaning', () => {
  it('puts a field in the band of a named field at strong, the weak band below, none under the floor', () => {
    const score = fieldsByMeaning(
      Q,
      vectors(
        [],
        [
          ['bedrooms', 0.45],
          ['budget', 0.3],
          ['phone', 0.1],
        ],
      ),
    );
    expect(score('bedrooms')).toBeGreaterThanOrEqual(FIELD_MATCH_SCORE);
    expect(score('budget')).toBeCloseTo(WEAK_MATCH_SCORE + 0.15, 6);
    expect(score('phone')).toBeNull();
    expect(score('unknown')).toBeNull();
  });
});

describe('recentByMeaning', () => {
  it("ranks the caller's reply to an agent question by the question's match and carries the question; the question takes no slot", () => {
    const q = turn('agent', 'Which area are you considering?');
    const a = turn('user', 'I want a 3 BHK in Koramangala.');
    const other = turn('user', 'We have two dogs.');
    const results = recentByMeaning(
      [q, a, other],
      'which area is she looking at',
      Q,
      vectors([
        [q, 0.5],
        [a, 0.05],
        [other, 0.1],
      ]),
      clock,
    );
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ source: 'recent', turnRefs: [q.turnId, a.turnId] });
    expect(results[0]!.score).toBeCloseTo(0.65, 6);
    expect(results[0]!.text).toBe('user on 2026-01-05, answering "Which area are you considering?": I want a 3 BHK in Koramangala.');
  });

  it('ranks an unanswered agent question below a caller statement that matches as well', () => {
    const said = turn('user', 'I am looking at flats in Koramangala.');
    const asked = turn('agent', 'Anything else about the area you are looking at?');
    const results = recentByMeaning(
      [said, asked],
      'which area is she looking at',
      Q,
      vectors([
        [said, 0.4],
        [asked, 0.4],
      ]),
      clock,
    );
    expect(results.map((r) => r.turnRefs[0])).toEqual([said.turnId, asked.turnId]);
    expect(results[0]!.score).toBeGreaterThan(results[1]!.score);
  });

  it('a reply that matches better by itself is shown as itself', () => {
    const q = turn('agent', 'How can I help?');
    const a = turn('user', 'I want to buy a flat.');
    const [r] = recentByMeaning(
      [q, a],
      'where does she want a flat',
      Q,
      vectors([
        [q, 0.25],
        [a, 0.5],
      ]),
      clock,
    );
    expect(r).toMatchObject({ turnRefs: [a.turnId], text: 'user on 2026-01-05: I want to buy a flat.' });
  });

  it('matches turns beyond the embedded ones by their words, as the lexical tier does', () => {
    const t = turn('user', 'My budget is 90 lakhs for the flat.');
    const [r] = recentByMeaning([t], 'budget for the flat', Q, vectors([]), clock);
    expect(r!.turnRefs).toEqual([t.turnId]);
    expect(r!.score).toBeCloseTo(0.65, 6);
  });
});
