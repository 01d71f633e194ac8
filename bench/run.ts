/**
 * `npm run bench`: run the benchmark suites of the chosen profile one after
 * another (they share two cores, so never in parallel), print progress while
 * they run and a summary table at the end, and write bench/results/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseFlags, USAGE } from './lib/cli.ts';
import { machineInfo } from './lib/machine.ts';
import { REPO_ROOT } from './lib/processes.ts';
import { say } from './lib/progress.ts';
import type { SuiteResult } from './lib/report-types.ts';
import { writeResults, type RunRecord } from './lib/results.ts';
import type { BenchContext, Suite } from './lib/suite.ts';
import { renderSummary } from './lib/table.ts';
import { SUITES } from './suites/index.ts';

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  if (flags.help) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  const profile = flags.full ? 'full' : 'quick';
  const unknown = [...flags.only, ...flags.skip].filter((n) => !SUITES.some((s) => s.name === n));
  if (unknown.length > 0) throw new Error(`unknown suite(s) ${unknown.join(', ')}; known: ${SUITES.map((s) => s.name).join(', ')}`);
  const selected = SUITES.filter((s) => !flags.skip.includes(s.name) && (flags.only.length > 0 ? flags.only.includes(s.name) : wanted(s, flags)));

  const tmpDir = mkdtempSync(join(tmpdir(), 'memgate-bench-'));
  const ctx: BenchContext = {
    profile,
    flags,
    repoRoot: REPO_ROOT,
    tmpDir,
    runId: randomBytes(4).toString('hex'),
    window: (quickS, fullS) => Math.max(1, (profile === 'full' ? fullS : quickS) * flags.timeScale),
  };
  const machine = machineInfo(REPO_ROOT);
  const startedAt = new Date().toISOString();
  say(`memgate bench — ${profile} profile, suites: ${selected.map((s) => s.name).join(', ')}`);
  say(`machine: ${machine.cpuModel}, nproc ${machine.nproc}, ${machine.ramGiB} GiB, Node ${machine.node}, load ${machine.loadAvg1m}, commit ${machine.commit}`);

  const results: SuiteResult[] = [];
  // Exiting kills every child process the suites started (see processes.ts) and the temp dir goes too.
  const interrupted = () => {
    say('interrupted: stopping child processes');
    rmSync(tmpDir, { recursive: true, force: true });
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    for (const suite of selected) results.push(await runSuite(suite, ctx));
    for (const suite of SUITES.filter((s) => !selected.includes(s))) {
      results.push({
        suite: suite.name,
        title: suite.title,
        status: 'not-run',
        reason:
          flags.only.length > 0 || flags.skip.length > 0
            ? 'not selected (--only / --skip)'
            : `not in the ${profile} profile (run with --full, --${suite.name === 'peer' ? 'peers' : suite.name} or --only ${suite.name})`,
        figures: [],
        details: {},
        durationS: 0,
      });
    }
  } finally {
    rmSync(tmpDir, { recursive: true, force: true });
  }
  const run: RunRecord = { startedAt, finishedAt: new Date().toISOString(), profile, argv: process.argv.slice(2), machine, loadAvgEnd1m: Math.round((loadavg()[0] ?? 0) * 100) / 100, suites: results };
  process.stdout.write(renderSummary(results) + '\n');
  if (!flags.noWrite) {
    const files = writeResults(join(REPO_ROOT, 'bench', 'results'), run);
    process.stdout.write(`\nresults: ${files.at(-1)}\n`);
  }
  if (results.some((r) => r.status === 'failed')) process.exitCode = 1;
}

function wanted(s: Suite, flags: ReturnType<typeof parseFlags>): boolean {
  if (flags.full) return true;
  if (s.name === 'peer') return flags.peers;
  if (s.name === 'production') return flags.production;
  return s.quick;
}

async function runSuite(suite: Suite, ctx: BenchContext): Promise<SuiteResult> {
  say(`\n▶ ${suite.title} (${suite.name})`);
  const t0 = performance.now();
  try {
    const outcome = await suite.run(ctx);
    const durationS = Math.round((performance.now() - t0) / 100) / 10;
    say(`■ ${suite.name}: ${outcome.status}${outcome.reason ? ` — ${outcome.reason}` : ''} (${durationS} s)`);
    return { suite: suite.name, title: suite.title, durationS, ...outcome };
  } catch (err) {
    const durationS = Math.round((performance.now() - t0) / 100) / 10;
    const reason = err instanceof Error ? err.message.split('\n').slice(0, 6).join(' | ') : String(err);
    say(`■ ${suite.name}: failed — ${reason}`);
    return { suite: suite.name, title: suite.title, status: 'failed', reason, figures: [], details: { stack: err instanceof Error ? err.stack : undefined }, durationS };
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
