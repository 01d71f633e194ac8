import type { Figure, SuiteResult } from './report-types.ts';

/** Render rows as an aligned plain-text table (first row = header). */
export function renderTable(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  const line = (row: readonly string[]) =>
    row
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const [head, ...body] = rows;
  if (!head) return '';
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

/** Render rows as a GitHub-flavoured Markdown table (first row = header). */
export function renderMarkdownTable(rows: readonly (readonly string[])[]): string {
  const [head, ...body] = rows;
  if (!head) return '';
  const esc = (c: string) => c.replace(/\|/g, '\\|');
  return [`| ${head.map(esc).join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...body.map((r) => `| ${r.map(esc).join(' | ')} |`)].join('\n');
}

/** A number for a table: thousands separators, at most 3 significant decimals. */
export function fmt(value: number | null | undefined, unit = ''): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  const s = value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
  return unit === '' ? s : unit === '%' ? `${s}%` : `${s} ${unit}`;
}

/** Ratio column text, e.g. "1.84×". */
export function fmtRatio(r: number | null | undefined): string {
  if (r === null || r === undefined) return '';
  // Two significant digits below 1 (0.0028×, not 0×); two decimals above.
  return `${r < 1 ? Number(r.toPrecision(2)).toString() : r.toLocaleString('en-US', { maximumFractionDigits: 2 })}×`;
}

/** Status column text of a figure with a target. */
export function fmtMet(f: Figure): string {
  if (f.met === undefined) return '';
  return f.met ? 'met' : 'MISSED';
}

/** The header and one row per figure: what the summary table and BENCHMARKS.md print. */
export function figureRows(figures: readonly Figure[]): string[][] {
  const rows: string[][] = [['benchmark', 'metric', 'value', 'baseline', 'ratio', 'target', 'status']];
  for (const f of figures) {
    rows.push([f.bench, f.metric, fmt(f.value, f.unit), f.baseline ? `${fmt(f.baseline.value, f.unit)} (${f.baseline.label})` : '', fmtRatio(f.ratio), f.target?.label ?? '', fmtMet(f)]);
  }
  return rows;
}

/** The end-of-run summary: one table per suite, plus a line for suites that did not run. */
export function renderSummary(results: readonly SuiteResult[]): string {
  const out: string[] = [];
  for (const r of results) {
    out.push(`\n== ${r.title} (${r.suite}) — ${r.status}${r.reason ? `: ${r.reason}` : ''} [${r.durationS.toFixed(1)} s]`);
    if (r.figures.length > 0) out.push(renderTable(figureRows(r.figures)));
  }
  const targets = results.flatMap((r) => r.figures.filter((f) => f.met !== undefined));
  const missed = targets.filter((f) => f.met === false);
  out.push(
    `\nTargets: ${targets.length - missed.length} met, ${missed.length} missed${missed.length > 0 ? ': ' + missed.map((f) => `${f.bench} ${f.metric} = ${fmt(f.value, f.unit)} (${f.target?.label})`).join('; ') : ''}`,
  );
  return out.join('\n');
}
