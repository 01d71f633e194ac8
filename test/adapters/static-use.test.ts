/**
 * The static embedder: USE-lite distilled into a piece table from the installed model
 * package (nothing downloaded), cached on disk, reused, and rebuilt when the cached file is
 * corrupt or was made by another recipe.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FusedEmbedder } from '../../src/adapters/fused/index.ts';
import { OfflineEmbedder } from '../../src/adapters/offline/index.ts';
import { DEFAULT_RECIPE, StaticUseEmbedder, type Recipe, type Teacher } from '../../src/adapters/static-use/index.ts';
import { symmetricEigen } from '../../src/adapters/static-use/pca.ts';
import { UseLiteEmbedder } from '../../src/adapters/use-lite/index.ts';
import { MemgateError } from '../../src/core/errors.ts';
import { embedderContract, PARAPHRASES } from '../contract/embedder.contract.ts';
import { removeDir } from '../support/tmp.ts';

const dir = mkdtempSync(join(tmpdir(), 'memgate-static-'));
afterAll(() => removeDir(dir));
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i]!, 0);

// The contract runs on the table in the default cache (built there by the first run, then reused).
embedderContract('static USE-lite table', () => new StaticUseEmbedder({ teacher: useLiteTeacher }), { dimensions: 256, semantic: false });
embedderContract(
  'fused hashing + static table',
  () =>
    new FusedEmbedder([
      { embedder: new OfflineEmbedder(), weight: 0.5 },
      { embedder: new StaticUseEmbedder({ teacher: useLiteTeacher }), weight: 0.5 },
    ]),
  { dimensions: 640, semantic: false },
);

function useLiteTeacher() {
  const model = new UseLiteEmbedder({ runIn: 'thread' });
  return { embed: (texts: string[]) => model.embed(texts), close: () => model.close() };
}

describe('StaticUseEmbedder', () => {
  const shared = new StaticUseEmbedder({ teacher: useLiteTeacher });

  // Piece rows carry meaning word by word: paraphrases sharing few words still score above unrelated
  // sentences. (It misses what a sentence encoder gets from context: "where does she want a flat" is
  // nearer "my car broke down" than "I want a 3 BHK in Koramangala", whose words split into pieces.)
  it.each(PARAPHRASES)('places a paraphrase closer than an unrelated sentence: %j', async (text, paraphrase, unrelated) => {
    const [t, p, u] = await shared.embed([text, paraphrase, unrelated]);
    expect(dot(t!, p!)).toBeGreaterThan(dot(t!, u!));
  });

  it('embeds a text as the weighted mean of its pieces: word order does not matter, rare words outweigh common ones', async () => {
    const [a, b, c, d] = await shared.embed(['the dog chased the cat', 'the cat chased the dog', 'the dog', 'dog']);
    expect(dot(a!, b!)).toBeCloseTo(1, 5);
    expect(dot(c!, d!)).toBeGreaterThan(0.9);
  });

  it('builds the table from the installed model once, reuses the cached file, and rebuilds a corrupt one or another recipe', { timeout: 600_000 }, async () => {
    const cacheDir = join(dir, 'cache');
    // The first build runs the real model; later builds replay its vectors, so each build is counted cheaply.
    let recorded: Float32Array[] | null = null;
    let builds = 0;
    const teacher = () => {
      builds++;
      const embed: Teacher = async (texts) => {
        if (recorded) return recorded;
        const model = new UseLiteEmbedder();
        recorded = await model.embed(texts);
        return recorded;
      };
      return { embed };
    };
    const ready: Array<{ built: boolean; path: string }> = [];
    const make = (recipe: Recipe = DEFAULT_RECIPE) => new StaticUseEmbedder({ cacheDir, teacher, recipe, onReady: (i) => ready.push(i) });
    const text = 'Caroline is researching adoption agencies.';
    const [first] = await make().embed([text]);
    expect([builds, ready[0]!.built]).toEqual([1, true]);
    const [files] = [readdirSync(cacheDir)];
    expect(files).toHaveLength(1);
    expect(readFileSync(join(cacheDir, files![0]!)).length).toBeGreaterThan(8000 * 256 * 4);

    const [again] = await make().embed([text]);
    expect([builds, ready[1]!.built]).toEqual([1, false]);
    expect(Array.from(again!)).toEqual(Array.from(first!));

    // A flipped byte in the rows: the checksum rejects the file and the table is built again.
    const path = ready[0]!.path;
    const bytes = readFileSync(path);
    bytes[bytes.length - 7]! ^= 0xff;
    writeFileSync(path, bytes);
    const [rebuilt] = await make().embed([text]);
    expect([builds, ready[2]!.built]).toEqual([2, true]);
    expect(Array.from(rebuilt!)).toEqual(Array.from(first!));
    // A torn file (cut short) as well.
    writeFileSync(path, readFileSync(path).subarray(0, 1000));
    await make().embed([text]);
    expect([builds, ready[3]!.built]).toEqual([3, true]);

    // Another recipe version gets its own file; the old one stays usable by its own version.
    await make({ ...DEFAULT_RECIPE, version: DEFAULT_RECIPE.version + 1000 }).embed([text]);
    expect([builds, ready[4]!.built]).toEqual([4, true]);
    expect(ready[4]!.path).not.toBe(path);
    expect(readdirSync(cacheDir).filter((f) => f.endsWith('.bin'))).toHaveLength(2);
  });

  it('refuses a bad recipe, and says so when no table is cached and no model can build one', async () => {
    expect(() => new StaticUseEmbedder({ recipe: { ...DEFAULT_RECIPE, dimensions: 0 } })).toThrow(MemgateError);
    expect(() => new StaticUseEmbedder({ recipe: { ...DEFAULT_RECIPE, dimensions: 600 } })).toThrow(/1\.\.512/);
    const e = new StaticUseEmbedder({ cacheDir: join(dir, 'empty') });
    expect(() => e.embedSync('x')).toThrow(/not loaded/);
    await expect(e.embed(['x'])).rejects.toMatchObject({ code: 'internal', message: expect.stringMatching(/no cached table/) });
  });
});

describe('symmetricEigen', () => {
  it('gives A v = λ v for every pair of a symmetric matrix', () => {
    const d = 5;
    const a = new Float64Array(d * d);
    for (let i = 0; i < d; i++) for (let j = i; j < d; j++) a[i * d + j] = a[j * d + i] = Math.sin(i * 7 + j * 3) + (i === j ? 3 : 0);
    const { values, vectors } = symmetricEigen(a, d);
    for (let c = 0; c < d; c++) {
      for (let i = 0; i < d; i++) {
        let av = 0;
        for (let j = 0; j < d; j++) av += a[i * d + j]! * vectors[j * d + c]!;
        expect(av).toBeCloseTo(values[c]! * vectors[i * d + c]!, 9);
      }
    }
  });
});
