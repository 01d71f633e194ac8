import { describe, expect, it } from 'vitest';
import { OfflineEmbedder } from '../../src/adapters/offline/offline-embedder.ts';
import { MemgateError } from '../../src/core/errors.ts';

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * (b[i] as number), 0);
const norm = (a: Float32Array) => Math.sqrt(cosine(a, a));

const ACUS = [
  "Rajiv Kumar (user) said Rajiv Kumar's budget is around 50 lakhs for now, as of 2026-01-05.",
  'Rajiv Kumar (user) applied for a loan with HDFC in the week of 2025-12-29, still waiting, as of 2026-01-05.',
  "Rajiv Kumar (user) said maybe, Rajiv Kumar is thinking about Sarjapur too, Rajiv Kumar's wife likes the schools there, as of 2026-01-15.",
  "Rajiv Kumar (user) is looking for a 3 BHK flat, ideally near Whitefield because Rajiv Kumar's office is there, as of 2026-01-05.",
  'Meera Shah (user) has been on metformin, 500 mg twice a day, since 2026-01-12, as of 2026-01-15.',
  'Daniel Okafor (user) has a dog, a golden retriever named Bruno, as of 2026-01-20.',
];

describe('OfflineEmbedder', () => {
  const e = new OfflineEmbedder();

  it('has a stable id and configurable dimensions, and refuses nonsense sizes', async () => {
    expect(e.id).toBe('offline-hash-v1');
    expect(e.dimensions).toBe(384);
    const small = new OfflineEmbedder({ dimensions: 64 });
    const [v] = await small.embed(['hello world']);
    expect(v).toHaveLength(64);
    expect(() => new OfflineEmbedder({ dimensions: 0 })).toThrow(MemgateError);
    expect(() => new OfflineEmbedder({ dimensions: 12.5 })).toThrow(/dimensions/);
  });

  it('is deterministic: identical texts give identical unit vectors, across instances', async () => {
    const [a, b] = await e.embed([ACUS[0]!, ACUS[0]!]);
    const [c] = await new OfflineEmbedder().embed([ACUS[0]!]);
    expect(Array.from(a!)).toEqual(Array.from(b!));
    expect(Array.from(a!)).toEqual(Array.from(c!));
    expect(cosine(a!, b!)).toBeCloseTo(1, 6);
    expect(norm(a!)).toBeCloseTo(1, 6);
  });

  it('returns one unit vector per text, in order, even for empty or all-stopword text', async () => {
    const vs = await e.embed(['', 'the and of', ...ACUS]);
    expect(vs).toHaveLength(ACUS.length + 2);
    for (const v of vs) expect(norm(v)).toBeCloseTo(1, 5);
    expect(Array.from(vs[2]!)).toEqual(Array.from(e.embedOne(ACUS[0]!)));
  });

  it.each([
    ['What budget did Rajiv mention?', 0],
    ['How much can he afford?', 0],
    ['Which bank did he apply for a loan with?', 1],
    ['Why does his wife like Sarjapur?', 2],
    ['apartment near work', 3],
    ['what meds is she taking', 4],
    ['does the caller have any pets', 5],
  ])('ranks the related fact first for %j', (query, expected) => {
    const q = e.embedOne(query);
    const scores = ACUS.map((d) => cosine(q, e.embedOne(d)));
    const best = scores.indexOf(Math.max(...scores));
    expect(best).toBe(expected);
  });

  it('puts texts about the same thing noticeably closer than unrelated ones', () => {
    const budget = e.embedOne('My budget is 80 lakhs');
    const price = e.embedOne('the price I can afford is 80 lakhs');
    const pets = e.embedOne('We have a golden retriever');
    expect(cosine(budget, price)).toBeGreaterThan(cosine(budget, pets) + 0.2);
  });

  it('matches names and places through spelling variants via character trigrams', () => {
    const rajiv = e.embedOne('Rajiv Kumar wants a flat');
    const meera = e.embedOne('Meera Shah wants a flat');
    const q = e.embedOne('Rajeev Kumaar');
    expect(cosine(q, rajiv)).toBeGreaterThan(cosine(q, meera) + 0.05);
    const typo = e.embedOne('flats in Whitefeild');
    expect(cosine(typo, e.embedOne('flats in Whitefield'))).toBeGreaterThan(cosine(typo, e.embedOne('flats in Sarjapur')) + 0.05);
  });

  it('meets a date however it is written: ISO in the fact, month names in the question', () => {
    const fact = e.embedOne('Meera Shah (user) saw the cardiologist on 2026-03-15, as of 2026-03-16.');
    const other = e.embedOne('Meera Shah (user) saw the cardiologist on 2026-05-02, as of 2026-05-03.');
    for (const q of ['Who did Meera see on March 15, 2026?', 'Who did Meera see on 15 March 2026?', 'Who did Meera see in March?']) {
      expect(cosine(e.embedOne(q), fact)).toBeGreaterThan(cosine(e.embedOne(q), other) + 0.02);
    }
  });

  it('counts a repeated word once, so a name repeated by pronoun rewriting does not outweigh the fact', () => {
    const q = e.embedOne('the museum trip');
    const repeated = cosine(q, e.embedOne("Rajiv took Rajiv's kids on the museum trip, Rajiv said"));
    const once = cosine(q, e.embedOne('Rajiv took the kids on the museum trip'));
    // Only the extra bigrams move it; a counted repetition would pull it well below.
    expect(repeated).toBeGreaterThan(0.9 * once);
  });

  it('keeps facts that differ only in the amount below the 0.95 duplicate threshold', () => {
    const a = e.embedOne("Rajiv Kumar (user) said Rajiv Kumar's budget is 50 lakhs, as of 2026-01-05.");
    const b = e.embedOne("Rajiv Kumar (user) said Rajiv Kumar's budget is 80 lakhs, as of 2026-01-15.");
    expect(cosine(a, b)).toBeLessThan(0.95);
    expect(cosine(a, b)).toBeGreaterThan(0.5);
  });
});
