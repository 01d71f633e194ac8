/**
 * A latency histogram in the spirit of HdrHistogram: values in microseconds go
 * into logarithmic buckets with ~0.5 % relative precision, so recording is O(1),
 * memory is fixed (~34 KB) whatever the run length, and histograms from several
 * load-generator processes merge exactly by adding counts.
 */

/** Relative width of a bucket: a percentile is reported within this fraction of the true value. */
const PRECISION = 0.005;
const LOG_BASE = Math.log1p(PRECISION);
/** 1 µs .. ~1,000 s. */
const BUCKETS = Math.ceil(Math.log(1e9) / LOG_BASE) + 2;

/** A histogram as plain JSON: sparse `[bucket, count]` pairs plus the exact extremes. */
export interface HistogramSnapshot {
  buckets: Array<[number, number]>;
  count: number;
  minUs: number;
  maxUs: number;
  sumUs: number;
}

/** Records latencies in µs; percentiles come back in µs. */
export class Histogram {
  private readonly counts = new Float64Array(BUCKETS);
  count = 0;
  minUs = Infinity;
  maxUs = 0;
  sumUs = 0;

  /** Record one latency in microseconds (negative and NaN values are clamped to 0). */
  record(us: number): void {
    const v = Number.isFinite(us) && us > 0 ? us : 0;
    this.counts[bucketOf(v)]! += 1;
    this.count += 1;
    this.sumUs += v;
    if (v < this.minUs) this.minUs = v;
    if (v > this.maxUs) this.maxUs = v;
  }

  /** Record a latency given in milliseconds. */
  recordMs(ms: number): void {
    this.record(ms * 1000);
  }

  /** Value at percentile `p` (0–100): the upper edge of the bucket holding that rank, capped at the max. */
  percentileUs(p: number): number {
    if (this.count === 0) return 0;
    const rank = Math.max(1, Math.ceil((p / 100) * this.count));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return Math.min(Math.max(upperEdge(i), this.minUs), this.maxUs);
    }
    return this.maxUs;
  }

  /** Mean in µs (0 when empty). */
  meanUs(): number {
    return this.count === 0 ? 0 : this.sumUs / this.count;
  }

  /** Add another histogram's counts into this one. */
  merge(other: Histogram | HistogramSnapshot): void {
    const snap = other instanceof Histogram ? other.snapshot() : other;
    for (const [i, c] of snap.buckets) this.counts[i]! += c;
    this.count += snap.count;
    this.sumUs += snap.sumUs;
    if (snap.count > 0) {
      this.minUs = Math.min(this.minUs, snap.minUs);
      this.maxUs = Math.max(this.maxUs, snap.maxUs);
    }
  }

  /** Sparse JSON form (what a child process sends over IPC). */
  snapshot(): HistogramSnapshot {
    const buckets: Array<[number, number]> = [];
    for (let i = 0; i < BUCKETS; i++) if (this.counts[i]! > 0) buckets.push([i, this.counts[i]!]);
    return { buckets, count: this.count, minUs: this.count === 0 ? 0 : this.minUs, maxUs: this.maxUs, sumUs: this.sumUs };
  }

  /** Rebuild from a snapshot. */
  static from(snap: HistogramSnapshot): Histogram {
    const h = new Histogram();
    h.merge(snap);
    return h;
  }
}

function bucketOf(us: number): number {
  if (us <= 1) return 0;
  return Math.min(BUCKETS - 1, Math.ceil(Math.log(us) / LOG_BASE));
}

function upperEdge(bucket: number): number {
  return bucket === 0 ? 1 : Math.exp(bucket * LOG_BASE);
}
