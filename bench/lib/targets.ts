import type { Figure, Target } from './report-types.ts';
import { ratio } from './stats.ts';

/** A target that holds when the value is strictly below `limit`. */
export function below(limit: number, label: string): Target {
  return { op: '<', limit, label };
}

/** A target that holds when the value is at least `limit`. */
export function atLeast(limit: number, label: string): Target {
  return { op: '>=', limit, label };
}

/** True when `value` satisfies the target (a missing value never does). */
export function meets(value: number | null, target: Target): boolean {
  if (value === null || !Number.isFinite(value)) return false;
  switch (target.op) {
    case '<':
      return value < target.limit;
    case '<=':
      return value <= target.limit;
    case '>':
      return value > target.limit;
    case '>=':
      return value >= target.limit;
  }
}

/** Inputs of `figure()`: the baseline value fills `ratio`, the target fills `met`. */
export interface FigureInput {
  bench: string;
  metric: string;
  value: number | null;
  unit: string;
  baseline?: { label: string; value: number | null };
  target?: Target;
  note?: string;
}

/** Build a figure with its ratio to the baseline and its target outcome computed in one place. */
export function figure(input: FigureInput): Figure {
  const f: Figure = { bench: input.bench, metric: input.metric, value: input.value, unit: input.unit };
  if (input.baseline) {
    f.baseline = input.baseline;
    f.ratio = ratio(input.value, input.baseline.value);
  }
  if (input.target) {
    f.target = input.target;
    f.met = meets(input.value, input.target);
  }
  if (input.note !== undefined) f.note = input.note;
  return f;
}
