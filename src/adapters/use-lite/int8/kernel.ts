/**
 * The int8 encoder's WebAssembly SIMD kernel (kernel.wat, embedded by
 * `npx tsx scripts/build-kernel.ts` as kernel-wasm.ts): loaded synchronously, one instance
 * and one memory per Kernel, with a bump allocator over that memory.
 *
 * Pointers are byte offsets into `memory`. Views over it go stale when the memory grows
 * (the old ArrayBuffer is detached), so the view helpers always build a fresh view on the
 * current buffer: take a view, use it, and take it again after any alloc().
 */
import { MemgateError } from '../../../core/errors.ts';
import { KERNEL_WASM_BASE64 } from './kernel-wasm.ts';

/** Default activation range of quantizeRows: 13-bit signed (|q| <= 4095). */
export const DEFAULT_MAXQ = 4095;

const PAGE = 65536;
/** First address handed out: 0 stays unused so a 0 pointer can mean "none" (qmatmul's bias). */
const HEAP_BASE = 64;

/** The WebAssembly.Memory members used here (tsconfig's libs have no WebAssembly types: they live in lib.dom). */
export interface KernelMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

/** The WebAssembly JS API members used here. */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { readonly exports: object };
}

const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

interface KernelExports {
  memory: KernelMemory;
  quantize_rows(x: number, rows: number, k: number, kpad: number, q: number, scales: number, maxq: number, relu: number): void;
  qmatmul(q: number, scales: number, rows: number, kpad: number, w: number, wscales: number, bias: number, n: number, out: number, ldo: number, acc: number): void;
  matmul_f32(a: number, lda: number, rows: number, k: number, b: number, ldb: number, n: number, out: number, ldo: number, alpha: number): void;
}

let compiled: object | undefined;

/**
 * Compile kernel bytes. The kernel needs WebAssembly fixed-width SIMD (Node 16.4+ on a CPU
 * with SSE4.1 or NEON): where it cannot compile, the error says how to run the encoder
 * without it instead of a bare CompileError from deep in a thread.
 */
export function moduleOf(bytes: Uint8Array): object {
  try {
    return new wasm.Module(bytes);
  } catch (err) {
    throw new MemgateError(
      'internal',
      `the int8 encoder's wasm SIMD kernel does not compile here (${err instanceof Error ? err.message : String(err)}); set MEMGATE_EMBEDDINGS_ENCODER_RUNTIME=tfjs to run the encoder on TF.js`,
      { cause: err, retryable: false },
    );
  }
}

/** The compiled module (a WebAssembly.Module), shared by every Kernel: compiled synchronously, once. */
function kernelModule(): object {
  compiled ??= moduleOf(Buffer.from(KERNEL_WASM_BASE64, 'base64'));
  return compiled;
}

/** k rounded up to the 16-element step qmatmul works in (the kpad of quantizeRows and the weights). */
export function padK(k: number): number {
  return Math.ceil(k / 16) * 16;
}

export class Kernel {
  readonly memory: KernelMemory;
  private readonly fns: KernelExports;
  private top = HEAP_BASE;

  constructor() {
    const instance = new wasm.Instance(kernelModule(), {});
    this.fns = instance.exports as unknown as KernelExports;
    this.memory = this.fns.memory;
  }

  /** Bytes handed out so far (the allocator's top). */
  get used(): number {
    return this.top;
  }

  /**
   * `bytes` bytes aligned to `align` (a power of two), growing the memory when needed.
   * Views taken before an alloc may be detached by it: take them again.
   */
  alloc(bytes: number, align = 16): number {
    if (!Number.isInteger(bytes) || bytes < 0) throw new MemgateError('internal', `kernel alloc: bad size ${bytes}`);
    if (!Number.isInteger(align) || align <= 0 || (align & (align - 1)) !== 0) throw new MemgateError('internal', `kernel alloc: alignment ${align} is not a power of two`);
    const ptr = Math.ceil(this.top / align) * align;
    const end = ptr + bytes;
    const have = this.memory.buffer.byteLength;
    if (end > have) {
      // Grow by at least half again, so a run of small allocations does not grow page by page.
      const pages = Math.max(Math.ceil((end - have) / PAGE), Math.ceil(have / PAGE / 2));
      try {
        this.memory.grow(pages);
      } catch (err) {
        try {
          this.memory.grow(Math.ceil((end - have) / PAGE));
        } catch {
          throw new MemgateError('internal', `kernel memory cannot grow to ${end} bytes`, { cause: err });
        }
      }
    }
    this.top = end;
    return ptr;
  }

  /** The allocator's position, for reset(): per-call scratch is alloc'd after a mark and released by reset. */
  mark(): number {
    return this.top;
  }

  /** Releases everything allocated since `mark` (the memory itself never shrinks). */
  reset(mark: number): void {
    if (mark < HEAP_BASE || mark > this.top) throw new MemgateError('internal', `kernel reset: mark ${mark} is outside the heap (${HEAP_BASE}..${this.top})`);
    this.top = mark;
  }

  /** A fresh Float32Array over `len` floats at `ptr` (ptr 4-aligned). */
  f32(ptr: number, len: number): Float32Array {
    return new Float32Array(this.memory.buffer, ptr, len);
  }

  /** A fresh Int16Array over `len` values at `ptr` (ptr 2-aligned). */
  i16(ptr: number, len: number): Int16Array {
    return new Int16Array(this.memory.buffer, ptr, len);
  }

  /** A fresh Int8Array over `len` bytes at `ptr`. */
  i8(ptr: number, len: number): Int8Array {
    return new Int8Array(this.memory.buffer, ptr, len);
  }

  /**
   * Per-row symmetric quantization: x (rows x k f32) -> q (rows x kpad i16, zero-padded),
   * scales[r] = max|x[r]| / maxq (1 for an all-zero row), q = nearest(x / scale), ties to even.
   * With `relu`, x is read as relu(x) = (x < 0 ? 0 : x), the scale taken over those values:
   * the same q and scales as zeroing the negatives in place and quantizing after (x is not written).
   */
  quantizeRows(x: number, rows: number, k: number, kpad: number, q: number, scales: number, maxq = DEFAULT_MAXQ, relu = false): void {
    checkKpad(k, kpad);
    this.fns.quantize_rows(x, rows, k, kpad, q, scales, maxq, relu ? 1 : 0);
  }

  /**
   * out[r * ldo + c] = f32(sum_j q[r * kpad + j] * w[c * kpad + j]) * scales[r] * wscales[c] + bias[c].
   * w is i8, transposed (n rows of kpad); bias 0 = none; ldo (>= n) is out's row stride in floats.
   * With `accumulate`, out[r * ldo + c] += that instead (f32 adds: bit-identical to computing the
   * product into a buffer and adding it to out after), so a residual add needs no buffer.
   */
  qmatmul(q: number, scales: number, rows: number, kpad: number, w: number, wscales: number, bias: number, n: number, out: number, ldo = n, accumulate = false): void {
    checkKpad(kpad, kpad);
    if (kpad > 2048) throw new MemgateError('internal', `qmatmul: kpad ${kpad} > 2048 could overflow the i32 sums`);
    if (ldo < n) throw new MemgateError('internal', `qmatmul: ldo ${ldo} < n ${n}`);
    this.fns.qmatmul(q, scales, rows, kpad, w, wscales, bias, n, out, ldo, accumulate ? 1 : 0);
  }

  /**
   * out[r * ldo + c] = alpha * sum_j a[r * lda + j] * b[c * ldb + j] (b transposed: n rows of k floats).
   * lda, ldb, ldo are row strides in floats, so a, b and out can be slices of wider matrices.
   */
  matmulF32(a: number, lda: number, rows: number, k: number, b: number, ldb: number, n: number, out: number, ldo: number, alpha = 1): void {
    if (lda < k || ldb < k || ldo < n) throw new MemgateError('internal', `matmulF32: strides (lda ${lda}, ldb ${ldb}, ldo ${ldo}) below k ${k} / n ${n}`);
    this.fns.matmul_f32(a, lda, rows, k, b, ldb, n, out, ldo, alpha);
  }
}

function checkKpad(k: number, kpad: number): void {
  if (kpad % 16 !== 0 || kpad < k) throw new MemgateError('internal', `kernel: kpad ${kpad} must be a multiple of 16 and >= k (${k})`);
}
