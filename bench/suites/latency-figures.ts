import type { Figure, Target } from '../lib/report-types.ts';
import type { LatencySummary } from '../lib/stats.ts';
import { figure } from '../lib/targets.ts';

/** Which target applies to which metric of a latency row. */
export interface LatencyTargets {
  p50Ms?: Target;
  p95Ms?: Target;
  p99Ms?: Target;
  throughputPerS?: Target;
}

/**
 * The standard figures of one latency row — p50, p95, p99, max, throughput, errors —
 * each beside the same metric of the baseline measured in the same run.
 */
export function latencyFigures(bench: string, subject: LatencySummary, baseline: { label: string; summary: LatencySummary } | null, targets: LatencyTargets = {}): Figure[] {
  const rows: Array<[keyof LatencySummary, string, string]> = [
    ['p50Ms', 'p50', 'ms'],
    ['p95Ms', 'p95', 'ms'],
    ['p99Ms', 'p99', 'ms'],
    ['maxMs', 'max', 'ms'],
    ['throughputPerS', 'throughput', '/s'],
    ['errors', 'errors', ''],
  ];
  return rows.map(([key, metric, unit]) => {
    const target = (targets as Record<string, Target | undefined>)[key];
    return figure({
      bench,
      metric,
      value: subject[key],
      unit,
      ...(baseline ? { baseline: { label: baseline.label, value: baseline.summary[key] } } : {}),
      ...(target ? { target } : {}),
    });
  });
}
