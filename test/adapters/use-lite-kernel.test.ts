/**
 * The int8 encoder's wasm kernel against plain-JS references: quantize_rows and qmatmul
 * must agree to the bit (the kernel's i32 sums are exact and its f32 steps are the
 * reference's, in the same order), with and without their fused steps (quantize_rows'
 * ReLU, qmatmul's accumulate: the references do them as the encoder's JS used to, as a
 * separate pass); matmul_f32 sums in another order, so within rounding.
 * Also: the allocator, and that the committed kernel-wasm.ts is a fresh compile of kernel.wat.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAXQ, Kernel, moduleOf, padK } from '../../src/adapters/use-lite/int8/kernel.ts';
import { MemgateError } from '../../src/core/errors.ts';
import { compileKernel, KERNEL_WASM_TS_PATH, renderKernelModule } from '../../scripts/kernel-compile.ts';

const KS = [1, 15, 17, 256, 300, 512, 1536];
const f = Math.fround;

/** mulberry32: a small seeded generator so a failure reproduces. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randInt(rand: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo + 1));
}

/** Round half to even, like f32.nearest. */
function nearestEven(v: number): number {
  if (!Number.isFinite(v)) return v;
  const fl = Math.floor(v);
  const diff = v - fl;
  if (diff < 0.5) return fl;
  if (diff > 0.5) return fl + 1;
  return fl % 2 === 0 ? fl : fl + 1;
}

/** ReLU as the encoder did it in JS before the kernel fused it: negatives zeroed in place (-0 and NaN kept). */
function refRelu(x: Float32Array): Float32Array {
  const y = x.slice();
  for (let i = 0; i < y.length; i++) if (y[i]! < 0) y[i] = 0;
  return y;
}

function refQuantize(x: Float32Array, rows: number, k: number, kpad: number, maxq: number, relu = false): { q: Int16Array; scales: Float32Array } {
  if (relu) x = refRelu(x);
  const q = new Int16Array(rows * kpad);
  const scales = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    let m = 0;
    for (let j = 0; j < k; j++) m = Math.max(m, Math.abs(x[r * k + j]!));
    const s = m > 0 ? f(m / maxq) : 1;
    scales[r] = s;
    for (let j = 0; j < k; j++) {
      const v = nearestEven(f(x[r * k + j]! / s));
      q[r * kpad + j] = Math.min(32767, Math.max(-32768, v));
    }
  }
  return { q, scales };
}

/**
 * The reference qmatmul, into out (row stride ldo); the f32 steps in the kernel's order.
 * accumulate: the product into a temporary, then out += it (the encoder's old residual add).
 */
function refQmatmul(
  q: Int16Array,
  scales: Float32Array,
  rows: number,
  kpad: number,
  w: Int8Array,
  wscales: Float32Array,
  bias: Float32Array | undefined,
  n: number,
  out: Float32Array,
  ldo: number,
  accumulate = false,
): void {
  const tmp = new Float32Array(rows * n);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < n; c++) {
      let sum = 0;
      for (let j = 0; j < kpad; j++) sum += q[r * kpad + j]! * w[c * kpad + j]!;
      tmp[r * n + c] = f(f(f(f(sum) * scales[r]!) * wscales[c]!) + (bias ? bias[c]! : 0));
    }
  }
  for (let r = 0; r < rows; r++) for (let c = 0; c < n; c++) out[r * ldo + c] = accumulate ? out[r * ldo + c]! + tmp[r * n + c]! : tmp[r * n + c]!;
}

/** Reference matmul_f32 in double, plus the bound sum |a||b| for the tolerance. */
function refMatmul(a: Float32Array, lda: number, rows: number, k: number, b: Float32Array, ldb: number, n: number, alpha: number): { out: Float64Array; mag: Float64Array } {
  const out = new Float64Array(rows * n);
  const mag = new Float64Array(rows * n);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < n; c++) {
      let s = 0;
      let m = 0;
      for (let j = 0; j < k; j++) {
        const p = a[r * lda + j]! * b[c * ldb + j]!;
        s += p;
        m += Math.abs(p);
      }
      out[r * n + c] = alpha * s;
      mag[r * n + c] = Math.abs(alpha) * m;
    }
  }
  return { out, mag };
}

/** First index where two arrays differ bit-for-bit (Object.is), or -1. */
function firstMismatch(got: ArrayLike<number>, want: ArrayLike<number>): number {
  if (got.length !== want.length) return 0;
  for (let i = 0; i < got.length; i++) if (!Object.is(got[i], want[i])) return i;
  return -1;
}

function expectSame(label: string, got: ArrayLike<number>, want: ArrayLike<number>): void {
  const i = firstMismatch(got, want);
  if (i >= 0) expect.fail(`${label}: index ${i}: got ${got[i]}, want ${want[i]} (lengths ${got.length}/${want.length})`);
}

const kernel = new Kernel();

/** Copies a JS array into fresh kernel memory and returns its pointer. */
function put(data: Float32Array | Int16Array | Int8Array): number {
  const ptr = kernel.alloc(data.byteLength);
  new Uint8Array(kernel.memory.buffer, ptr, data.byteLength).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return ptr;
}

function randomF32(rand: () => number, len: number, scale: number): Float32Array {
  const x = new Float32Array(len);
  for (let i = 0; i < len; i++) x[i] = (rand() * 2 - 1) * scale;
  return x;
}

function runQuantize(x: Float32Array, rows: number, k: number, kpad: number, maxq = DEFAULT_MAXQ, relu = false): { q: Int16Array; scales: Float32Array } {
  const mark = kernel.mark();
  const xp = put(x);
  // q is pre-filled with garbage: the kernel must write every lane, padding included
  const qp = put(new Int16Array(rows * kpad).fill(-7));
  const sp = put(new Float32Array(rows).fill(-1));
  kernel.quantizeRows(xp, rows, k, kpad, qp, sp, maxq, relu);
  const res = { q: kernel.i16(qp, rows * kpad).slice(), scales: kernel.f32(sp, rows).slice() };
  // the input is read, never written (the ReLU is applied on the fly)
  expectSame('quantize_rows input', kernel.f32(xp, rows * k), x);
  kernel.reset(mark);
  return res;
}

interface QmatmulCase {
  q: Int16Array;
  scales: Float32Array;
  rows: number;
  kpad: number;
  w: Int8Array;
  wscales: Float32Array;
  bias?: Float32Array;
  n: number;
  /** Output row stride and first column inside it (to test writing into a wider buffer). */
  ldo?: number;
  col0?: number;
  /** out += the product: out starts as `initial` (rows x ldo; a sentinel fill without it). */
  accumulate?: boolean;
  initial?: Float32Array;
}

/** Runs qmatmul into a sentinel-filled (or `initial`) wider buffer; returns the whole buffer and the reference's. */
function runQmatmul(t: QmatmulCase): { got: Float32Array; want: Float32Array } {
  const ldo = t.ldo ?? t.n;
  const col0 = t.col0 ?? 0;
  const mark = kernel.mark();
  const qp = put(t.q);
  const sp = put(t.scales);
  const wp = put(t.w);
  const wsp = put(t.wscales);
  const bp = t.bias ? put(t.bias) : 0;
  const want = t.initial ? t.initial.slice() : new Float32Array(t.rows * ldo).fill(12345.5);
  const op = put(want);
  kernel.qmatmul(qp, sp, t.rows, t.kpad, wp, wsp, bp, t.n, op + col0 * 4, ldo, t.accumulate ?? false);
  const got = kernel.f32(op, t.rows * ldo).slice();
  kernel.reset(mark);
  refQmatmul(t.q, t.scales, t.rows, t.kpad, t.w, t.wscales, t.bias, t.n, want.subarray(col0), ldo, t.accumulate ?? false);
  return { got, want };
}

function randomQmatmulCase(rand: () => number, rows: number, k: number, n: number, withBias: boolean): QmatmulCase {
  const kpad = padK(k);
  const q = new Int16Array(rows * kpad);
  for (let r = 0; r < rows; r++) for (let j = 0; j < k; j++) q[r * kpad + j] = randInt(rand, -4095, 4095);
  const w = new Int8Array(n * kpad);
  for (let c = 0; c < n; c++) for (let j = 0; j < k; j++) w[c * kpad + j] = randInt(rand, -127, 127);
  const scales = new Float32Array(rows).map(() => 1e-4 + rand() * 1e-2);
  const wscales = new Float32Array(n).map(() => 1e-4 + rand() * 1e-2);
  const bias = withBias ? randomF32(rand, n, 2) : undefined;
  return { q, scales, rows, kpad, w, wscales, ...(bias ? { bias } : {}), n };
}

describe('use-lite int8 kernel: quantize_rows', () => {
  it('matches the reference bit for bit over rows 1..37 and every k', () => {
    const rand = rng(1);
    for (let rows = 1; rows <= 37; rows++) {
      for (const k of KS) {
        const kpad = padK(k) + (rows % 3 === 0 ? 16 : 0); // some extra padding too
        const x = randomF32(rand, rows * k, rows % 2 ? 3 : 1e4);
        const got = runQuantize(x, rows, k, kpad);
        const want = refQuantize(x, rows, k, kpad, DEFAULT_MAXQ);
        expectSame(`scales rows ${rows} k ${k}`, got.scales, want.scales);
        expectSame(`q rows ${rows} k ${k}`, got.q, want.q);
      }
    }
  });

  it('handles all-zero rows, ties, large magnitudes and other maxq', () => {
    const rand = rng(2);
    for (const k of [1, 7, 8, 9, 15, 16, 17, 300]) {
      const rows = 6;
      const kpad = padK(k);
      const x = new Float32Array(rows * k);
      // row 0 all zero; row 1 all negative; row 2 huge; row 3 tiny; row 4 constant; row 5 exact ties
      for (let j = 0; j < k; j++) {
        x[1 * k + j] = -1 - rand() * 5;
        x[2 * k + j] = (rand() * 2 - 1) * 3e37;
        x[3 * k + j] = (rand() * 2 - 1) * 1e-30;
        x[4 * k + j] = -2.5;
        x[5 * k + j] = j === 0 ? 8 : (j % 16) - 8 + 0.5; // with maxq 8 the scale is 1: every other lane is a .5 tie
      }
      for (const maxq of [DEFAULT_MAXQ, 127, 8, 32767]) {
        const got = runQuantize(x, rows, k, kpad, maxq);
        const want = refQuantize(x, rows, k, kpad, maxq);
        expectSame(`scales k ${k} maxq ${maxq}`, got.scales, want.scales);
        expectSame(`q k ${k} maxq ${maxq}`, got.q, want.q);
        expect(got.scales[0]).toBe(1);
        expect(Array.from(got.q.subarray(0, kpad)).every((v) => v === 0)).toBe(true);
        expect(Math.max(...Array.from(got.q.subarray(kpad, 2 * kpad), Math.abs))).toBe(maxq);
      }
    }
  });

  it("with relu, matches quantizing the ReLU'd rows bit for bit over rows 1..37 and every k", () => {
    const rand = rng(10);
    for (let rows = 1; rows <= 37; rows++) {
      for (const k of KS) {
        const kpad = padK(k) + (rows % 3 === 0 ? 16 : 0);
        const x = randomF32(rand, rows * k, rows % 2 ? 3 : 1e4);
        // some rows lean negative, so the ReLU'd maximum is not the magnitude's
        for (let r = 0; r < rows; r += 3) for (let j = 0; j < k; j++) x[r * k + j] = x[r * k + j]! - (rows % 2 ? 2 : 6e3);
        const got = runQuantize(x, rows, k, kpad, DEFAULT_MAXQ, true);
        const want = refQuantize(x, rows, k, kpad, DEFAULT_MAXQ, true);
        expectSame(`relu scales rows ${rows} k ${k}`, got.scales, want.scales);
        expectSame(`relu q rows ${rows} k ${k}`, got.q, want.q);
        expect(Math.min(...Array.from(got.q))).toBeGreaterThanOrEqual(0);
      }
    }
  });

  it('with and without relu, handles negative-only rows, -0, infinities and NaN like the reference', () => {
    const rand = rng(11);
    for (const k of [1, 3, 4, 7, 8, 9, 16, 17, 300]) {
      const rows = 6;
      const kpad = padK(k);
      const x = randomF32(rand, rows * k, 5);
      // row 0 all negative; row 1 -0 and +0; row 2 a -inf; row 3 a +inf; row 4 a NaN; row 5 mixed, the largest magnitude negative
      for (let j = 0; j < k; j++) {
        x[0 * k + j] = -1 - rand() * 5;
        x[1 * k + j] = j % 2 ? -0 : 0;
        x[5 * k + j] = j === k - 1 ? -50 : rand() * 3;
      }
      x[2 * k + (k >> 1)] = -Infinity;
      x[3 * k + (k - 1)] = Infinity;
      x[4 * k] = NaN;
      for (const relu of [false, true]) {
        const got = runQuantize(x, rows, k, kpad, DEFAULT_MAXQ, relu);
        const want = refQuantize(x, rows, k, kpad, DEFAULT_MAXQ, relu);
        expectSame(`scales k ${k} relu ${relu}`, got.scales, want.scales);
        expectSame(`q k ${k} relu ${relu}`, got.q, want.q);
      }
      const relu = runQuantize(x, rows, k, kpad, DEFAULT_MAXQ, true);
      expect(relu.scales[0]).toBe(1);
      expect(Array.from(relu.q.subarray(0, 2 * kpad)).every((v) => v === 0)).toBe(true);
      if (k > 1) expect(relu.q[5 * kpad + k - 1]).toBe(0); // row 5's -50 is cut: its positives set the scale
      expect(relu.scales[5]).toBe(k > 1 ? f(Math.max(...Array.from(x.subarray(5 * k, 6 * k - 1))) / DEFAULT_MAXQ) : 1);
    }
  });
});

describe('use-lite int8 kernel: qmatmul', () => {
  it('matches the reference bit for bit over rows 1..37, every k and n 1..70', () => {
    const rand = rng(3);
    let n = 1;
    for (let rows = 1; rows <= 37; rows++) {
      for (const k of KS) {
        const t = randomQmatmulCase(rand, rows, k, n, (rows + k) % 2 === 0);
        const { got, want } = runQmatmul(t);
        expectSame(`rows ${rows} k ${k} n ${n}`, got, want);
        n = (n % 70) + 1;
      }
    }
  });

  it('matches at the encoder widths n = 512 and 1536', () => {
    const rand = rng(4);
    for (const [rows, k, n] of [
      [5, 300, 512],
      [33, 512, 1536],
      [8, 1536, 512],
      [3, 17, 1536],
    ] as const) {
      const { got, want } = runQmatmul(randomQmatmulCase(rand, rows, k, n, true));
      expectSame(`rows ${rows} k ${k} n ${n}`, got, want);
    }
  });

  it('writes only its columns of a wider output (ldo > n)', () => {
    const rand = rng(5);
    for (const [rows, k, n, ldo, col0] of [
      [7, 64, 5, 16, 3],
      [9, 300, 33, 100, 40],
      [4, 16, 2, 3, 1],
      [1, 1, 1, 9, 8],
    ] as const) {
      const { got, want } = runQmatmul({ ...randomQmatmulCase(rand, rows, k, n, true), ldo, col0 });
      expectSame(`rows ${rows} n ${n} ldo ${ldo} col0 ${col0}`, got, want);
    }
  });

  it('accumulating, adds into out bit for bit like a separate add over rows 1..37, every k and n 1..70', () => {
    const rand = rng(12);
    let n = 1;
    for (let rows = 1; rows <= 37; rows++) {
      for (const k of KS) {
        const initial = randomF32(rand, rows * n, rows % 2 ? 0.5 : 300);
        const t = { ...randomQmatmulCase(rand, rows, k, n, (rows + k) % 2 === 0), accumulate: true, initial };
        const { got, want } = runQmatmul(t);
        expectSame(`accumulate rows ${rows} k ${k} n ${n}`, got, want);
        n = (n % 70) + 1;
      }
    }
  });

  it('accumulating, touches only its columns of a wider output and works at the encoder widths', () => {
    const rand = rng(13);
    for (const [rows, k, n, ldo, col0] of [
      [7, 64, 5, 16, 3],
      [9, 300, 33, 100, 40],
      [4, 16, 2, 3, 1],
      [1, 1, 1, 9, 8],
      [13, 256, 512, 512, 0],
      [38, 1536, 512, 512, 0],
    ] as const) {
      const initial = randomF32(rand, rows * ldo, 10);
      // exact cancellations (out = -(the product): the sum is +0) and -0 outside the columns, which must stay -0
      const t: QmatmulCase = { ...randomQmatmulCase(rand, rows, k, n, true), ldo, col0, accumulate: true, initial };
      const plain = runQmatmul({ ...t, accumulate: false, initial: new Float32Array(rows * ldo) }).got;
      for (let i = 0; i < rows * ldo; i += 3) initial[i] = -plain[i]!;
      const { got, want } = runQmatmul(t);
      expectSame(`accumulate rows ${rows} n ${n} ldo ${ldo} col0 ${col0}`, got, want);
      for (let r = 0; r < rows; r++) for (let c = 0; c < ldo; c++) if (c < col0 || c >= col0 + n) expect(got[r * ldo + c]).toBe(initial[r * ldo + c]);
    }
  });

  it('sums exactly at the extremes (|q| = 4095, |w| = 127, kpad = 2048)', () => {
    const rows = 6;
    const n = 5;
    const kpad = 2048;
    const q = new Int16Array(rows * kpad);
    const w = new Int8Array(n * kpad);
    for (let i = 0; i < q.length; i++) q[i] = Math.floor(i / kpad) % 2 ? -4095 : 4095;
    for (let i = 0; i < w.length; i++) w[i] = Math.floor(i / kpad) === 2 ? -127 : 127;
    // row 5 all zero; column 4 alternating signs
    q.fill(0, 5 * kpad);
    for (let j = 0; j < kpad; j++) w[4 * kpad + j] = j % 2 ? -127 : 127;
    const t: QmatmulCase = { q, scales: new Float32Array(rows).fill(1), rows, kpad, w, wscales: new Float32Array(n).fill(1), n };
    const { got, want } = runQmatmul(t);
    expectSame('extremes', got, want);
    expect(got[0]).toBe(f(4095 * 127 * 2048));
    expect(got[1 * n + 2]).toBe(f(4095 * 127 * 2048));
    expect(got[4]).toBe(0);
  });

  it('quantize_rows then qmatmul approximates the f32 product', () => {
    const rand = rng(6);
    const rows = 11;
    const k = 300;
    const n = 37;
    const kpad = padK(k);
    const x = randomF32(rand, rows * k, 2);
    const wf = randomF32(rand, n * k, 0.1);
    const { q, scales } = runQuantize(x, rows, k, kpad);
    // per-column weight quantization, transposed layout
    const w = new Int8Array(n * kpad);
    const wscales = new Float32Array(n);
    for (let c = 0; c < n; c++) {
      let m = 0;
      for (let j = 0; j < k; j++) m = Math.max(m, Math.abs(wf[c * k + j]!));
      wscales[c] = m / 127;
      for (let j = 0; j < k; j++) w[c * kpad + j] = Math.round(wf[c * k + j]! / wscales[c]!);
    }
    const { got } = runQmatmul({ q, scales, rows, kpad, w, wscales, n });
    const exact = refMatmul(x, k, rows, k, wf, k, n, 1);
    for (let i = 0; i < rows * n; i++) expect(Math.abs(got[i]! - exact.out[i]!)).toBeLessThan(0.02 * exact.mag[i]! + 1e-6);
  });

  it('rejects a kpad that is not a multiple of 16', () => {
    expect(() => kernel.qmatmul(64, 64, 1, 24, 64, 64, 0, 1, 64)).toThrow(MemgateError);
    expect(() => kernel.quantizeRows(64, 1, 17, 16, 64, 64)).toThrow(MemgateError);
  });
});

describe('use-lite int8 kernel: matmul_f32', () => {
  function check(rand: () => number, rows: number, k: number, n: number, lda: number, ldb: number, ldo: number, alpha: number, scale = 1): void {
    const a = randomF32(rand, rows * lda, scale);
    const b = randomF32(rand, n * ldb, scale);
    const mark = kernel.mark();
    // +1 float: a and b start 4 bytes off a 16-byte boundary, so the SIMD loads are unaligned
    const ap = kernel.alloc((rows * lda + 1) * 4) + 4;
    kernel.f32(ap, rows * lda).set(a);
    const bp = kernel.alloc((n * ldb + 1) * 4) + 4;
    kernel.f32(bp, n * ldb).set(b);
    const op = put(new Float32Array(rows * ldo).fill(777));
    kernel.matmulF32(ap, lda, rows, k, bp, ldb, n, op, ldo, alpha);
    const got = kernel.f32(op, rows * ldo).slice();
    kernel.reset(mark);
    const { out, mag } = refMatmul(a, lda, rows, k, b, ldb, n, alpha);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < ldo; c++) {
        const g = got[r * ldo + c]!;
        if (c >= n) {
          if (g !== 777) expect.fail(`rows ${rows} k ${k} n ${n}: wrote outside its columns at (${r}, ${c})`);
          continue;
        }
        const want = out[r * n + c]!;
        const tol = 1e-6 * mag[r * n + c]! + 1e-30;
        if (!(Math.abs(g - want) <= tol)) expect.fail(`rows ${rows} k ${k} n ${n} lda ${lda}: (${r}, ${c}) got ${g}, want ${want} ± ${tol}`);
      }
    }
  }

  it('matches the reference over rows 1..37, every k and n 1..70', () => {
    const rand = rng(7);
    let n = 1;
    for (let rows = 1; rows <= 37; rows++) {
      for (const k of [...KS, 2, 3, 4, 5, 32, 64]) {
        if (rows * k * n > 2e6 && k > 64) continue;
        check(rand, rows, k, n, k, k, n, 1);
        n = (n % 70) + 1;
      }
    }
  });

  it('addresses head slices of wider matrices (odd strides, ldo > n) and scales by alpha', () => {
    const rand = rng(8);
    for (const [rows, k, n, lda, ldb, ldo, alpha] of [
      [13, 64, 13, 193, 195, 20, 0.125],
      [32, 32, 32, 129, 131, 33, 1 / Math.sqrt(32)],
      [5, 3, 7, 9, 5, 7, -2],
      [37, 17, 70, 51, 18, 71, 0.5],
      [128, 64, 128, 256, 256, 128, 0.125],
    ] as const) {
      check(rand, rows, k, n, lda, ldb, ldo, alpha);
    }
  });

  it('handles large magnitudes, zeros and k = 0', () => {
    const rand = rng(9);
    check(rand, 9, 21, 6, 21, 21, 6, 1, 1e18);
    check(rand, 4, 0, 3, 1, 1, 3, 1);
    const mark = kernel.mark();
    const a = put(new Float32Array(4 * 8));
    const b = put(randomF32(rand, 3 * 8, 1));
    const o = put(new Float32Array(12).fill(5));
    kernel.matmulF32(a, 8, 4, 8, b, 8, 3, o, 3, 1);
    expect(Array.from(kernel.f32(o, 12)).every((v) => v === 0)).toBe(true);
    kernel.reset(mark);
  });
});

describe('use-lite int8 kernel: memory', () => {
  it('aligns, grows, and releases to a mark', () => {
    const k = new Kernel();
    const p1 = k.alloc(3, 1);
    expect(p1).toBeGreaterThan(0);
    const p2 = k.alloc(10);
    expect(p2 % 16).toBe(0);
    expect(p2).toBeGreaterThanOrEqual(p1 + 3);
    const p3 = k.alloc(8, 64);
    expect(p3 % 64).toBe(0);
    const mark = k.mark();
    const before = k.memory.buffer.byteLength;
    const big = k.alloc(5 * 1024 * 1024);
    expect(k.memory.buffer.byteLength).toBeGreaterThan(before);
    const view = k.f32(big, 5 * 256 * 1024);
    view[view.length - 1] = 3;
    expect(k.f32(big, 5 * 256 * 1024)[view.length - 1]).toBe(3);
    k.reset(mark);
    expect(k.alloc(16, 1)).toBe(mark);
    expect(() => k.reset(k.used + 16)).toThrow(MemgateError);
    expect(() => k.alloc(16, 3)).toThrow(MemgateError);
  });

  it('views taken after growth see the kernel write', () => {
    const k = new Kernel();
    const x = k.alloc(4 * 4);
    k.f32(x, 4).set([1, -2, 3, -4]);
    k.alloc(3 * 65536); // grow: views taken before are detached now
    const q = k.alloc(16 * 2);
    const s = k.alloc(4);
    k.quantizeRows(x, 1, 4, 16, q, s, 4);
    expect(Array.from(k.i16(q, 4))).toEqual([1, -2, 3, -4]);
    expect(k.f32(s, 1)[0]).toBe(1);
  });
});

describe('use-lite int8 kernel: build', () => {
  it('kernel-wasm.ts is a fresh compile of kernel.wat (run `npm run build:kernel` after editing the WAT)', async () => {
    const fresh = renderKernelModule(await compileKernel());
    expect(readFileSync(KERNEL_WASM_TS_PATH, 'utf8')).toBe(fresh);
  });

  it('where the kernel cannot compile, says so and names the runtime to use instead', () => {
    // Bytes a wasm engine refuses, as one without SIMD refuses the kernel's SIMD opcodes.
    const refused = Uint8Array.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0xff]);
    expect(() => moduleOf(refused)).toThrow(MemgateError);
    expect(() => moduleOf(refused)).toThrow(/does not compile here .*MEMGATE_EMBEDDINGS_ENCODER_RUNTIME=tfjs/);
  });
});
