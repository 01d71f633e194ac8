/**
 * The binary codes (one sign bit per dimension) of a user's ACUs held in memory, and the
 * Hamming scan over them that picks the candidates of the exact rescore.
 *
 * Why in memory: sqlite-vec 0.1.9's binary KNN costs grow with the candidates asked for (100k
 * codes of one user: 35 ms for 150, 64 ms for 300), and at 100k ACUs recall ≥ 0.99 needs about
 * 500 of them. A popcount scan of the same codes in JS costs the same for any number of
 * candidates (~5 ms for 100k 896-d codes on this project's machine): distances into a Uint16Array,
 * a histogram of them, and a cut at the distance where the shortlist is reached; the shortlist
 * is then ranked by the query's floats against the codes' signs (see `nearest`).
 */

/** A user's codes of one vector size, in the order their rows were written (rid ascending). */
export class UserCodes {
  /** 32-bit words per code (the code's bytes, rounded up to whole words; the padding is zero). */
  readonly words: number;
  count = 0;
  private codes: Int32Array;
  private rids: Float64Array;

  /**
   * `since`/`version`/`maxRid`: the user's write stamp when these codes were read (see
   * SqliteAcuIndex: a new `since` means reload, a new `version` or `maxRid` means append the rows
   * past `maxRid`).
   */
  constructor(
    readonly dim: number,
    public since: number,
    public version: number,
    public maxRid: number,
    capacity: number,
  ) {
    this.words = Math.ceil(Math.ceil(dim / 8) / 4);
    this.codes = new Int32Array(Math.max(1, capacity) * this.words);
    this.rids = new Float64Array(Math.max(1, capacity));
  }

  /** Bytes held (what the cache's budget counts). */
  get bytes(): number {
    return this.codes.byteLength + this.rids.byteLength;
  }

  /** Append a row's code (sign bits packed 8 per byte, as `binaryCode` makes them and vec0 stores them). */
  push(rid: number, code: Uint8Array): void {
    if (this.count === this.rids.length) this.grow(Math.ceil(this.count * 1.5) + 16);
    const at = this.count * this.words * 4;
    new Uint8Array(this.codes.buffer, at, this.words * 4).set(code.subarray(0, this.words * 4));
    this.rids[this.count++] = rid;
  }

  /**
   * The rids of the `n` rows whose codes best match `query` (L2-normalised, of size `dim`), in
   * no particular order; every row when `n >= count`. Two steps, both over the codes alone: the
   * `shortlist` rows nearest by Hamming distance to the query's own code, then the `n` of those
   * with the largest asymmetric score, the query's floats dotted with the codes' signs (a
   * lookup table per code byte). With it 400 candidates keep 0.999 of the exact top-10 of 100k
   * topic-clustered vectors, where Hamming alone needs 500 (BENCHMARKS.md, vector engine).
   */
  nearest(query: Float32Array, n: number, shortlist: number, scratch: ScanScratch): number[] {
    const count = this.count;
    if (n >= count) return Array.from(this.rids.subarray(0, count));
    const slots = shortlist >= count ? Int32Array.from({ length: count }, (_, i) => i) : this.hammingNearest(query, shortlist, scratch);
    const codeBytes = Math.ceil(this.dim / 8);
    const table = scratch.table(codeBytes * 256);
    // table[j*256 + c]: the query's dims 8j..8j+7 summed, each + where byte c has its bit set, - where not.
    for (let j = 0; j < codeBytes; j++) {
      const t = j * 256;
      let none = 0;
      for (let b = 0; b < 8; b++) none -= query[8 * j + b] ?? 0;
      table[t] = none;
      for (let c = 1; c < 256; c++) table[t + c] = table[t + (c & (c - 1))]! + 2 * (query[8 * j + (31 - Math.clz32(c & -c))] ?? 0);
    }
    const bytes = new Uint8Array(this.codes.buffer);
    const stride = this.words * 4;
    const scores = new Float64Array(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const o = slots[i]! * stride;
      let s = 0;
      for (let j = 0; j < codeBytes; j++) s += table[j * 256 + bytes[o + j]!]!;
      scores[i] = s;
    }
    // Ties: the older row first.
    const order = Array.from(slots.keys()).sort((x, y) => scores[y]! - scores[x]! || slots[x]! - slots[y]!);
    return order.slice(0, n).map((i) => this.rids[slots[i]!]!);
  }

  /** Slots of the `n` codes nearest the query's code by Hamming distance (ties at the cut: the older rows). */
  private hammingNearest(query: Float32Array, n: number, scratch: ScanScratch): Int32Array {
    const count = this.count;
    const words = this.words;
    const q = new Int32Array(words);
    const qb = new Uint8Array(q.buffer);
    for (let i = 0; i < query.length; i++) if (query[i]! > 0) qb[i >> 3]! |= 1 << (i & 7);
    const dist = scratch.distances(count);
    const hist = scratch.histogram(words * 32 + 1);
    const codes = this.codes;
    for (let i = 0, o = 0; i < count; i++, o += words) {
      let d = 0;
      for (let w = 0; w < words; w++) d += popcount32(codes[o + w]! ^ q[w]!);
      dist[i] = d;
      hist[d]!++;
    }
    // The cut: the smallest distance at which the rows at or below it reach n.
    let cut = 0;
    let below = 0;
    while (below + hist[cut]! < n) below += hist[cut++]!;
    let atCut = n - below;
    const out = new Int32Array(n);
    let m = 0;
    for (let i = 0; i < count && m < n; i++) {
      const d = dist[i]!;
      if (d < cut || (d === cut && atCut-- > 0)) out[m++] = i;
    }
    return out;
  }

  private grow(capacity: number): void {
    const codes = new Int32Array(capacity * this.words);
    codes.set(this.codes.subarray(0, this.count * this.words));
    const rids = new Float64Array(capacity);
    rids.set(this.rids.subarray(0, this.count));
    this.codes = codes;
    this.rids = rids;
  }
}

/** Scan buffers shared by the searches of one index (one search runs at a time: the calls are synchronous). */
export class ScanScratch {
  private dist = new Uint16Array(0);
  private hist = new Uint32Array(0);
  private lookup = new Float64Array(0);

  table(size: number): Float64Array {
    if (this.lookup.length < size) this.lookup = new Float64Array(size);
    return this.lookup;
  }

  distances(count: number): Uint16Array {
    if (this.dist.length < count) this.dist = new Uint16Array(Math.ceil(count * 1.25));
    return this.dist;
  }

  /** Zeroed. */
  histogram(size: number): Uint32Array {
    if (this.hist.length < size) this.hist = new Uint32Array(size);
    else this.hist.fill(0, 0, size);
    return this.hist;
  }
}

/** Set bits of a 32-bit integer (SWAR; V8 compiles it to a handful of integer ops). */
function popcount32(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/**
 * Users' codes under a byte budget, least recently searched evicted first. The index keeps a
 * user whose codes alone would exceed the budget out of it (and answers that user with
 * sqlite-vec's KNN instead).
 */
export class CodeCache {
  /** Each entry with the bytes it was counted at (an entry grows when rows are appended). */
  private readonly entries = new Map<string, { codes: UserCodes; bytes: number }>();
  private held = 0;

  constructor(readonly budgetBytes: number) {}

  /** Bytes held by every cached user's codes. */
  get bytes(): number {
    return this.held;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The entry, marked most recently used. */
  get(key: string): UserCodes | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.codes;
  }

  /** Store `codes` (or count them again after they grew), evicting the least recently used past the budget. */
  put(key: string, codes: UserCodes): void {
    this.drop(key);
    if (codes.bytes > this.budgetBytes) return;
    this.entries.set(key, { codes, bytes: codes.bytes });
    this.held += codes.bytes;
    for (const [k, e] of this.entries) {
      if (this.held <= this.budgetBytes) break;
      this.entries.delete(k);
      this.held -= e.bytes;
    }
  }

  drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.held -= entry.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.held = 0;
  }
}
