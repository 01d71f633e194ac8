/**
 * The int8 USE-lite runtime against the float reference (TF.js running the package's own
 * graph, in this process): the same pieces from the ported tokenizer, vectors within a
 * small cosine of TF.js's, and a text's vector independent of what it is batched with.
 * Also: the vectors are the bits they were before the kernel fused the FFN's ReLU and the
 * residual adds (a speed change must not move them).
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

/**
 * Three texts (13, 40 and 128 pieces: embedded in one call they make a chunk of 53 rows, which
 * ends in a 1-row remainder tile, and one of 128 alone) and their vectors as computed before the
 * kernel fused the FFN's ReLU and the residual adds (commit b6e3eab): an FNV-1a hash of each
 * vector's bytes and a few exact values. Node 20 (V8's own Math.exp/tanh/sin/cos, so the same
 * bits on any machine); the wasm arithmetic is deterministic.
 */
const PINNED = [
  {
    text: 'Melanie painted a sunrise over the lake.',
    pieces: 13,
    hash: 'eef43be6',
    head: [-0.06247791275382042, 0.03074338473379612, 0.03771362081170082],
    last: 0.004646555986255407,
  },
  {
    text: 'My budget is 50 lakhs for a 3 BHK near Whitefield; the site visit is on 21 March at 11 am, and Meera has been on metformin since January!',
    pieces: 40,
    hash: '67253e9b',
    head: [0.0641743466258049, 0.025136219337582588, -0.04061680659651756],
    last: 0.07001642137765884,
  },
  {
    text: Array.from({ length: 150 }, (_, i) => `w${(i * 7919) % 1000}`).join(' '),
    pieces: 128,
    hash: '9adc410c',
    head: [-0.035350997000932693, 0.04813486337661743, 0.06005895510315895],
    last: 0.022087374702095985,
  },
];

/** FNV-1a over the bytes of a float vector, as 8 hex digits. */
function fnv1a(v: Float32Array): string {
  const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

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

  it('gives the same vectors, bit for bit, as before the kernel fused the ReLU and the residual adds', () => {
    const out = encoder.embed(PINNED.map((p) => p.text));
    PINNED.forEach((p, i) => {
      const v = out.subarray(i * 512, (i + 1) * 512);
      expect(encoder.encode(p.text)).toHaveLength(p.pieces);
      expect(Array.from(v.subarray(0, 3))).toEqual(p.head);
      expect(v[511]).toBe(p.last);
      expect(fnv1a(v)).toBe(p.hash);
    });
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
