/**
 * The int8 USE-lite runtime against the float reference (TF.js running the package's own
 * graph, in this process): the same pieces from the ported tokenizer, vectors within a
 * small cosine of TF.js's, and a text's vector independent of what it is batched with.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { Int8Encoder } from '../../src/adapters/use-lite/int8/encoder.ts';
import { PieceTokenizer, type Vocabulary } from '../../src/text/piece-tokenizer.ts';
import { ModelFiles } from '../../src/adapters/use-lite/int8/weights.ts';
import { loadUseLite } from '../../src/adapters/use-lite/model.ts';
import { PARAPHRASES } from '../contract/embedder.contract.ts';

const require = createRequire(import.meta.url);
const { EmbeddingsModel } = require('@energetic-ai/embeddings') as { EmbeddingsModel: new (d: { vocabulary: Vocabulary; model: null }) => { tokenizer: { encode(t: string): number[] } } };

const WORDS = `Caroline went to an LGBTQ support group on 7 May 2023, and Melanie painted a sunrise over the
lake. My budget is 50 lakhs for a 3 BHK near Whitefield; the site visit is on 21 March at 11 am. Meera has
been on metformin, 500 mg twice a day, since January! Daniel's golden retriever "Bruno" is scared of
thunderstorms — isn't he? e-mail: rajiv@example.com, +91 98450 12345. naïve café Ünïcödé 北京 मैसूर 🙂🏠`.split(/\s+/);

/** Texts of 1 to 140 words (past the model's 128 pieces), cut from WORDS at varied offsets, and awkward ones. */
const TEXTS = [
  ...Array.from({ length: 60 }, (_, i) => Array.from({ length: 1 + ((i * 37) % 140) }, (_, j) => WORDS[(i * 11 + j) % WORDS.length]).join(' ')),
  ...PARAPHRASES.flat(),
  'a',
  'hello   world  ',
  '🙂🙂🙂',
  '\u200b zero width',
  'e\u0301 combining',
  'x'.repeat(400),
];

const cosine = (a: Float32Array, b: Float32Array) => {
  let d = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    d += a[i]! * b[i]!;
    na += a[i]! ** 2;
    nb += b[i]! ** 2;
  }
  return d / Math.sqrt(na * nb);
};

describe('int8 USE-lite runtime', () => {
  const { vocabulary } = new ModelFiles();
  const encoder = new Int8Encoder();

  it('splits text into the same pieces as the tokenizer the model was run with', () => {
    const original = new EmbeddingsModel({ vocabulary, model: null }).tokenizer;
    const ported = new PieceTokenizer(vocabulary);
    for (const text of [...TEXTS, '', ' ', '  leading', 'trailing  ', 'ÅΩ≈ç√∫˜µ≤', '\u{1F468}\u200d\u{1F469}\u200d\u{1F467}', 'ｆｕｌｌｗｉｄｔｈ'])
      expect(ported.encode(text), JSON.stringify(text)).toEqual(original.encode(text));
  });

  it("gives vectors within a cosine of 0.997 of TF.js's (0.9995 on average) for texts of 1 to 128 pieces and awkward ones", async () => {
    const tfjs = (await loadUseLite('tfjs')).model;
    const reference = await tfjs.embed(TEXTS);
    const ours = encoder.embed(TEXTS);
    const cosines = reference.map((r, i) => cosine(r, ours.subarray(i * 512, (i + 1) * 512)));
    expect(Math.min(...cosines)).toBeGreaterThan(0.997);
    expect(cosines.reduce((a, b) => a + b, 0) / cosines.length).toBeGreaterThan(0.9995);
  });

  it('gives a text the same vector whatever it is batched with (no padding, per-row quantization)', () => {
    const all = encoder.embed(TEXTS);
    for (const i of [0, 7, 42, TEXTS.length - 1]) expect(encoder.embed([TEXTS[i]!])).toEqual(all.subarray(i * 512, (i + 1) * 512));
  });

  it('reads at most 128 pieces of a text, as the graph does', () => {
    const long = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
    expect(encoder.encode(long)).toHaveLength(128);
    const clipped = encoder.embed([long]);
    const prefix = encoder.embed([Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ') + ' and more words at the end']);
    expect(prefix).toEqual(clipped);
  });

  it('holds its weights and scratch in a bounded wasm memory (~16 MiB), however long the batch', () => {
    encoder.embed(Array.from({ length: 64 }, () => 'x '.repeat(200)));
    expect(encoder.memoryBytes()).toBeLessThan(24 * 2 ** 20);
  });
});
