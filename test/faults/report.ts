import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/processes.ts';

/** One fault suite's figures, as `scripts/faults-report.ts` prints them and RELIABILITY.md quotes them. */
export interface FaultFigures {
  suite: string;
  cases: number;
  failures: number;
  /** Acked turns missing afterwards (null when the suite does not append). */
  turnsLost: number | null;
  /** How the service came back, in words and numbers (null when nothing went down). */
  recovery: string | null;
  notes: string;
}

/** Write `.tmp/faults/<suite>.json`. */
export function writeFaultFigures(f: FaultFigures): void {
  const dir = join(REPO_ROOT, '.tmp', 'faults');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${f.suite}.json`), JSON.stringify(f, null, 2) + '\n');
}

/** p50 / max of a list of milliseconds, rounded, for notes. */
export function spread(ms: number[]): string {
  if (ms.length === 0) return 'n/a';
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return `p50 ${at(0.5).toFixed(1)} ms, max ${s[s.length - 1]!.toFixed(1)} ms`;
}
