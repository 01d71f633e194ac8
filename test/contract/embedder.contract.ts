import { describe, expect, it } from 'vitest';
import type { Embedder } from '../../src/ports/embedder.ts';

/** What the suite may expect of an embedder beyond the port's shape. */
export interface EmbedderContractOptions {
  /** Vector size the adapter must report and return. */
  dimensions: number;
  /** The embedder models meaning (paraphrases score above unrelated sentences), not only shared words. */
  semantic: boolean;
  /** Largest element-wise difference allowed between two embeddings of one text (0 = bit-identical). */
  tolerance?: number;
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i]!, 0);
const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);

const SENTENCES = [
  'Rajiv Kumar is looking for a 3 BHK flat near Whitefield.',
  'Meera has been on metformin, 500 mg twice a day, since January.',
  'Daniel has a golden retriever named Bruno.',
  'The site visit is on 21 March at 11 am.',
];

/** A sentence, a paraphrase of it sharing few words, and a sentence about something else. */
export const PARAPHRASES: ReadonlyArray<[string, string, string]> = [
  ['I moved to Mysore last month.', 'Last month I relocated to Mysore.', 'My dog is scared of thunderstorms.'],
  ['What is my budget for the apartment?', 'How much money can I spend on the flat?', 'Which doctor did I see on Tuesday?'],
  ['She takes her medicine every morning.', 'Each morning she has her pills.', 'The train to Chennai was delayed.'],
  ['Caroline went to an LGBTQ support group.', 'Caroline attended a meeting of a support group for LGBTQ people.', 'Melanie painted a sunrise over the lake.'],
  ['Do you have any pets?', 'Is there a dog or a cat in your home?', 'When does the bank open tomorrow?'],
];

const UNICODE = ['मैं पिछले महीने मैसूर चला गया', '北京的天气很好', 'Ünïcödé café naïve', 'emoji 🙂🏠💸 only', 'e\u0301 combining marks', '\u200b\u200b zero width'];

/** The Embedder contract: size, unit length, determinism, batching, awkward input, and (semantic ones) meaning. */
export function embedderContract(name: string, make: () => Embedder, opts: EmbedderContractOptions): void {
  const tol = opts.tolerance ?? 0;
  describe(`Embedder contract: ${name}`, () => {
    const e = make();
    const expectUnit = (v: Float32Array | undefined) => {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v!.length).toBe(opts.dimensions);
      expect(v!.every(Number.isFinite)).toBe(true);
      expect(Math.sqrt(dot(v!, v!))).toBeCloseTo(1, 4);
    };

    it('reports its id and dimensions, and returns one unit vector of that size per text, in order', async () => {
      expect(e.id).toMatch(/\S/);
      expect(e.dimensions).toBe(opts.dimensions);
      expect(await e.embed([])).toEqual([]);
      const vs = await e.embed(SENTENCES);
      expect(vs).toHaveLength(SENTENCES.length);
      for (const v of vs) expectUnit(v);
      // In order: each text's vector is nearest to its own single embedding.
      for (let i = 0; i < SENTENCES.length; i++) {
        const [single] = await e.embed([SENTENCES[i]!]);
        const scores = vs.map((v) => dot(v, single!));
        expect(scores.indexOf(Math.max(...scores))).toBe(i);
      }
    });

    it('is deterministic: the same text gives the same vector within a call, across calls and across instances', async () => {
      const [a, b] = await e.embed([SENTENCES[0]!, SENTENCES[0]!]);
      const [c] = await e.embed([SENTENCES[0]!]);
      const [d] = await make().embed([SENTENCES[0]!]);
      expect(maxDiff(a!, b!)).toBeLessThanOrEqual(tol);
      expect(maxDiff(a!, c!)).toBeLessThanOrEqual(tol);
      expect(maxDiff(c!, d!)).toBeLessThanOrEqual(tol);
    });

    it('gives a batch the same vectors as one call per text, and concurrent calls the same as sequential ones', async () => {
      const texts = [...SENTENCES, ...PARAPHRASES.flat()];
      const batch = await e.embed(texts);
      const singles: Float32Array[] = [];
      for (const t of texts) singles.push((await e.embed([t]))[0]!);
      const concurrent = (await Promise.all(texts.map((t) => e.embed([t])))).map((r) => r[0]!);
      for (let i = 0; i < texts.length; i++) {
        expect(maxDiff(batch[i]!, singles[i]!)).toBeLessThanOrEqual(Math.max(tol, 1e-6));
        expect(maxDiff(concurrent[i]!, singles[i]!)).toBeLessThanOrEqual(Math.max(tol, 1e-6));
      }
    });

    it('embeds empty, blank, unicode and very long texts as finite unit vectors', async () => {
      const long = Array.from({ length: 400 }, (_, i) => `${SENTENCES[i % SENTENCES.length]} (${i})`).join(' ');
      expect(long.length).toBeGreaterThan(20_000);
      const inputs = ['', '   \n\t', ...UNICODE, long];
      const vs = await e.embed(inputs);
      expect(vs).toHaveLength(inputs.length);
      for (const v of vs) expectUnit(v);
      // Alone as well as in a batch: an empty text must not fail the call.
      expectUnit((await e.embed(['']))[0]);
      // The long text is about its sentences, not noise: closer to one of them than to an unrelated one.
      const [l, s, u] = await e.embed([long, SENTENCES[2]!, PARAPHRASES[1]![2]]);
      expect(dot(l!, s!)).toBeGreaterThan(dot(l!, u!));
    });

    it('scores a text against itself 1 and distinct sentences below 1', async () => {
      const vs = await e.embed(SENTENCES);
      expect(dot(vs[0]!, vs[0]!)).toBeCloseTo(1, 4);
      for (let i = 1; i < vs.length; i++) expect(dot(vs[0]!, vs[i]!)).toBeLessThan(0.9);
    });

    if (opts.semantic) {
      it.each(PARAPHRASES)('places a paraphrase closer than an unrelated sentence: %j', async (text, paraphrase, unrelated) => {
        const [t, p, u] = await e.embed([text, paraphrase, unrelated]);
        expect(dot(t!, p!)).toBeGreaterThan(dot(t!, u!) + 0.1);
      });
    }
  });
}
