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
import { figureRows, renderMarkdownTable } from './lib/table.ts';

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

const args = process.argv.slice(2);
const onlyAt = args.indexOf('--only');
const only = onlyAt >= 0 ? (args.splice(onlyAt, 2)[1] ?? '').split(',').filter(Boolean) : [];
const files = args.length > 0 ? args : [join(REPO_ROOT, 'bench', 'results', 'latest.json')];
process.stdout.write(files.map((f) => render(f, only)).join('\n\n') + '\n');
