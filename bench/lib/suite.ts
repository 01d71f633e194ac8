import type { BenchFlags } from './cli.ts';
import type { Figure } from './report-types.ts';

/** What a suite gets: the profile, the flags, a private temp dir and a run id for namespacing. */
export interface BenchContext {
  profile: 'quick' | 'full';
  flags: BenchFlags;
  repoRoot: string;
  /** Removed when the run ends. */
  tmpDir: string;
  /** Short random id: agent ids, key prefixes and streams of this run carry it. */
  runId: string;
  /** Seconds of a measured window: `quick` or `full` value, times --time-scale. */
  window(quickS: number, fullS: number): number;
}

/** What a suite's run returns (the runner adds name, title and duration). */
export interface SuiteOutcome {
  status: 'ok' | 'not-run' | 'failed';
  reason?: string;
  figures: Figure[];
  details: Record<string, unknown>;
}

/** One benchmark suite. */
export interface Suite {
  name: string;
  title: string;
  /** Part of the quick profile (the others run with --full, their flag, or --only). */
  quick: boolean;
  run(ctx: BenchContext): Promise<SuiteOutcome>;
}

/** A suite that could not run here, with the reason (a row in the summary, never a silent gap). */
export function notRun(reason: string, details: Record<string, unknown> = {}): SuiteOutcome {
  return { status: 'not-run', reason, figures: [], details };
}
