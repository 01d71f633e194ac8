import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MachineInfo } from './machine.ts';
import type { SuiteResult } from './report-types.ts';

/** One whole `npm run bench` run as stored in bench/results/. */
export interface RunRecord {
  startedAt: string;
  finishedAt: string;
  profile: 'quick' | 'full';
  argv: string[];
  machine: MachineInfo;
  /** 1-minute load average when the run ended (with machine.loadAvg1m: how busy the machine was). */
  loadAvgEnd1m: number;
  suites: SuiteResult[];
}

/**
 * Write `<suite>-<timestamp>.json` per suite that ran, the whole run as
 * `run-<profile>-<timestamp>.json` and as `latest.json`
 * (via a temp file and rename, so a reader never sees half a file). Returns the paths.
 */
export function writeResults(dir: string, run: RunRecord): string[] {
  mkdirSync(dir, { recursive: true });
  const stamp = run.startedAt.replace(/[:.]/g, '-');
  const written: string[] = [];
  for (const suite of run.suites) {
    if (suite.status === 'not-run') continue;
    const file = join(dir, `${suite.suite}-${stamp}.json`);
    writeFileSync(file, JSON.stringify({ ...run, suites: [suite] }, null, 2) + '\n');
    written.push(file);
  }
  const whole = join(dir, `run-${run.profile}-${stamp}.json`);
  writeFileSync(whole, JSON.stringify(run, null, 2) + '\n');
  written.push(whole);
  const latest = join(dir, 'latest.json');
  writeFileSync(latest + '.tmp', JSON.stringify(run, null, 2) + '\n');
  renameSync(latest + '.tmp', latest);
  written.push(latest);
  return written;
}
