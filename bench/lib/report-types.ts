/**
 * The shapes every suite returns and the results file stores. A figure is one
 * number a user would quote ("append p99 at 1,000 calls"), with the baseline it
 * was measured against in the same run, the ratio to it, and the target it must
 * meet, so the summary table and BENCHMARKS.md are generated, not hand-copied.
 */

/** A target on one figure: `value op limit` must hold. */
export interface Target {
  op: '<' | '<=' | '>' | '>=';
  limit: number;
  /** How the target reads in the table, e.g. "p99 < 10 ms". */
  label: string;
}

/** One reported number. */
export interface Figure {
  /** Which benchmark row it belongs to, e.g. "ws append, 1,000 calls, voice cadence". */
  bench: string;
  /** The metric, e.g. "p99", "throughput", "recall@5". */
  metric: string;
  value: number | null;
  unit: string;
  baseline?: { label: string; value: number | null };
  /** value / baseline.value (null when there is no baseline value). */
  ratio?: number | null;
  target?: Target;
  /** Target outcome; undefined when the figure has no target. */
  met?: boolean;
  note?: string;
}

/** What one suite produced. */
export interface SuiteResult {
  suite: string;
  title: string;
  status: 'ok' | 'not-run' | 'failed';
  /** Why it did not run or failed. */
  reason?: string;
  figures: Figure[];
  /** Raw summaries, configuration and anything a reader may want to re-derive a figure from. */
  details: Record<string, unknown>;
  durationS: number;
}
