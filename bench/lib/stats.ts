import { Histogram } from './histogram.ts';

/** What every latency figure reports (milliseconds unless the name says otherwise). */
export interface LatencySummary {
  /** Operations that completed. */
  count: number;
  /** Operations that failed (error reply, timeout, closed connection). */
  errors: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
  /** Length of the measured window. */
  durationS: number;
  /** Completed operations per second over the window. */
  throughputPerS: number;
}

/** Summarise a histogram measured over `durationS` seconds. */
export function summarize(h: Histogram, errors: number, durationS: number): LatencySummary {
  const ms = (us: number) => round3(us / 1000);
  return {
    count: h.count,
    errors,
    p50Ms: ms(h.percentileUs(50)),
    p95Ms: ms(h.percentileUs(95)),
    p99Ms: ms(h.percentileUs(99)),
    maxMs: ms(h.maxUs),
    meanMs: ms(h.meanUs()),
    durationS: round3(durationS),
    throughputPerS: durationS > 0 ? Math.round((h.count / durationS) * 10) / 10 : 0,
  };
}

/** Summary of a list of millisecond samples (small, in-process measurements). */
export function summarizeMs(samplesMs: readonly number[], errors: number, durationS: number): LatencySummary {
  const h = new Histogram();
  for (const s of samplesMs) h.recordMs(s);
  return summarize(h, errors, durationS);
}

/** Round to 3 decimals for reporting. */
export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** `a / b` rounded to 3 decimals, or null when the baseline is zero or missing. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined || b === null || b === undefined || b === 0) return null;
  return round3(a / b);
}
