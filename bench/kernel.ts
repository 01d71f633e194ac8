/**
 * Micro-bench of the int8 encoder's wasm kernel: `npx tsx bench/kernel.ts`.
 * GMAC/s (multiply-accumulates per ns, single thread) of qmatmul at the encoder's dense
 * shapes and of matmul_f32 at attention shapes; each figure is the median of several
 * timed runs after a warm-up (which also lets V8 tier the module up from Liftoff to TurboFan).
 */
import { Kernel, padK } from '../src/adapters/use-lite/int8/kernel.ts';

const RUNS = 9;
/** Each timed run repeats the call until it has done at least this many MACs (~10-30 ms). */
const MACS_PER_RUN = 200e6;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function fillRandom(view: Float32Array | Int16Array | Int8Array, lo: number, hi: number, integer: boolean): void {
  for (let i = 0; i < view.length; i++) {
    const v = lo + Math.random() * (hi - lo);
    view[i] = integer ? Math.round(v) : v;
  }
}

function timeIt(macsPerCall: number, call: () => void): number {
  const reps = Math.max(1, Math.ceil(MACS_PER_RUN / macsPerCall));
  for (let i = 0; i < reps * 3; i++) call(); // warm-up
  const rates: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < reps; i++) call();
    const ns = Number(process.hrtime.bigint() - t0);
    rates.push((macsPerCall * reps) / ns);
  }
  return median(rates);
}

function benchQmatmul(kernel: Kernel, rows: number, k: number, n: number, accumulate = false): number {
  const mark = kernel.mark();
  const kpad = padK(k);
  const x = kernel.alloc(rows * k * 4);
  const q = kernel.alloc(rows * kpad * 2);
  const scales = kernel.alloc(rows * 4);
  const w = kernel.alloc(n * kpad);
  const wscales = kernel.alloc(n * 4);
  const bias = kernel.alloc(n * 4);
  const out = kernel.alloc(rows * n * 4);
  fillRandom(kernel.f32(x, rows * k), -3, 3, false);
  fillRandom(kernel.i8(w, n * kpad), -127, 127, true);
  fillRandom(kernel.f32(wscales, n), 0.001, 0.01, false);
  fillRandom(kernel.f32(bias, n), -1, 1, false);
  kernel.quantizeRows(x, rows, k, kpad, q, scales);
  // accumulating: the repeated calls keep adding into out, which stays finite over a run
  const rate = timeIt(rows * kpad * n, () => kernel.qmatmul(q, scales, rows, kpad, w, wscales, bias, n, out, n, accumulate));
  kernel.reset(mark);
  return rate;
}

function benchMatmulF32(kernel: Kernel, rows: number, k: number, n: number): number {
  const mark = kernel.mark();
  const a = kernel.alloc(rows * k * 4);
  const b = kernel.alloc(n * k * 4);
  const out = kernel.alloc(rows * n * 4);
  fillRandom(kernel.f32(a, rows * k), -1, 1, false);
  fillRandom(kernel.f32(b, n * k), -1, 1, false);
  const rate = timeIt(rows * k * n, () => kernel.matmulF32(a, k, rows, k, b, k, n, out, n, 0.125));
  kernel.reset(mark);
  return rate;
}

function benchQuantize(kernel: Kernel, rows: number, k: number, relu = false): number {
  const mark = kernel.mark();
  const kpad = padK(k);
  const x = kernel.alloc(rows * k * 4);
  const q = kernel.alloc(rows * kpad * 2);
  const scales = kernel.alloc(rows * 4);
  fillRandom(kernel.f32(x, rows * k), -3, 3, false);
  // "MACs" here are elements, so the figure reads as Gelem/s
  const rate = timeIt(rows * k, () => kernel.quantizeRows(x, rows, k, kpad, q, scales, undefined, relu));
  kernel.reset(mark);
  return rate;
}

const kernel = new Kernel();
const fmt = (x: number): string => x.toFixed(2).padStart(6);

console.log('qmatmul (int8 weights x 13-bit activations, i32 sums), single thread');
for (const [rows, k, n] of [
  [32, 256, 768],
  [32, 512, 1536],
  [32, 1536, 512],
  [128, 512, 1536],
] as const) {
  console.log(`  rows ${String(rows).padStart(3)}  k ${String(k).padStart(4)}  n ${String(n).padStart(4)}  ${fmt(benchQmatmul(kernel, rows, k, n))} GMAC/s`);
}
console.log('qmatmul accumulating into out (the residual adds: attention output, FFN conv2)');
for (const [rows, k, n] of [
  [32, 512, 512],
  [32, 1536, 512],
] as const) {
  console.log(`  rows ${String(rows).padStart(3)}  k ${String(k).padStart(4)}  n ${String(n).padStart(4)}  ${fmt(benchQmatmul(kernel, rows, k, n, true))} GMAC/s`);
  console.log(`     (the same, plain store)         ${fmt(benchQmatmul(kernel, rows, k, n))} GMAC/s`);
}

console.log('matmul_f32 (attention: q . k^T per head)');
for (const [rows, k, n] of [
  [32, 64, 32],
  [32, 32, 32],
  [128, 64, 128],
  [13, 64, 13],
] as const) {
  console.log(`  rows ${String(rows).padStart(3)}  k ${String(k).padStart(4)}  n ${String(n).padStart(4)}  ${fmt(benchMatmulF32(kernel, rows, k, n))} GMAC/s`);
}

console.log('quantize_rows');
console.log(`  rows  32  k  512  ${fmt(benchQuantize(kernel, 32, 512))} Gelem/s`);
console.log(`  rows  32  k 1536  ${fmt(benchQuantize(kernel, 32, 1536))} Gelem/s`);
console.log(`  rows  32  k 1536  ${fmt(benchQuantize(kernel, 32, 1536, true))} Gelem/s (relu)`);
