/**
 * Render a results file (default bench/results/latest.json) as the Markdown
 * tables BENCHMARKS.md carries, so the published figures are generated from a
 * run, never retyped: `npx tsx bench/render-md.ts [results.json ...]`. Several
 * files (e.g. a quick run and a --full run) render one after the other.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './lib/processes.ts';
import type { RunRecord } from './lib/results.ts';
import { figureRows, fmt, renderMarkdownTable } from './lib/table.ts';

function render(file: string, only: readonly string[]): string {
  const run = JSON.parse(readFileSync(file, 'utf8')) as RunRecord;
  const m = run.machine;
  const out: string[] = [
    `### Run ${run.startedAt} (${run.profile} profile, \`${['npm run bench', ...(run.argv.length > 0 ? ['--', ...run.argv] : [])].join(' ')}\`)`,
    '',
    `Machine: ${m.cpuModel}, nproc ${m.nproc}, ${m.ramGiB} GiB RAM, Node ${m.node}, ${m.os}; 1-min load average ${m.loadAvg1m} at start, ${run.loadAvgEnd1m ?? 'n/a'} at end; commit ${m.commit}. Results file: \`${file.replace(REPO_ROOT + '/', '')}\`.`,
  ];
  for (const s of run.suites.filter((x) => only.length === 0 || only.includes(x.suite))) {
    out.push('', `#### ${s.title}`, '', `Suite \`${s.suite}\`: ${s.status}${s.reason ? ` — ${s.reason}` : ''} (${s.durationS} s).`);
    if (s.figures.length > 0) out.push('', renderMarkdownTable(figureRows(s.figures)));
  }
  return out.join('\n');
}

/** One row per target figure, one column per run: how each target fared run after run. */
function renderTargets(files: readonly string[]): string {
  const runs = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as RunRecord).sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  const keys: string[] = [];
  const cell = new Map<string, string>();
  runs.forEach((run, i) => {
    for (const f of run.suites.flatMap((s) => s.figures)) {
      if (!f.target) continue;
      const key = `${f.bench} — ${f.metric} (${f.target.label})`;
      if (!keys.includes(key)) keys.push(key);
      cell.set(`${i}\u0000${key}`, `${fmt(f.value, f.unit)} ${f.met ? 'met' : '**missed**'}`);
    }
  });
  const head = ['target', ...runs.map((r) => `${r.startedAt.slice(11, 16)} ${r.profile}, load ${r.machine.loadAvg1m}→${r.loadAvgEnd1m ?? '?'}, ${r.machine.commit}`)];
  const rows = keys.map((k) => [k, ...runs.map((_, i) => cell.get(`${i}\u0000${k}`) ?? '—')]);
  return renderMarkdownTable([head, ...rows]);
}

const args = process.argv.slice(2);
const targetsMode = args.includes('--targets');
if (targetsMode) args.splice(args.indexOf('--targets'), 1);
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? (args.splice(onlyAt, 2)[1] ?? '').split(',').filter(Boolean) : [];
const files = args.length > 0 ? args : [join(REPO_ROOT, 'bench', 'results', 'latest.json')];
process.stdout.write((targetsMode ? renderTargets(files) : files.map((f) => render(f, only)).join('\n\n')) + '\n');
