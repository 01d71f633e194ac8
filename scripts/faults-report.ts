/**
 * Print the fault suites' figures (`.tmp/faults/*.json`, written by test/faults/*)
 * as the markdown table RELIABILITY.md quotes. Run after `npm test`:
 *   npx tsx scripts/faults-report.ts
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = join(process.cwd(), '.tmp', 'faults');
const files = existsSync(dir)
  ? readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
  : [];
if (files.length === 0) {
  console.log('faults: no figures (.tmp/faults is empty: did the fault suites run?)');
  process.exit(0);
}
const cell = (v: unknown) => (v === null || v === undefined ? '–' : String(v).replace(/\|/g, '\\|').replace(/\n/g, ' '));
console.log('| suite | cases | failures | acked turns lost | recovery | notes |');
console.log('|---|---:|---:|---:|---|---|');
for (const f of files) {
  const r = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Record<string, unknown>;
  console.log(`| ${cell(r['suite'])} | ${cell(r['cases'])} | ${cell(r['failures'])} | ${cell(r['turnsLost'])} | ${cell(r['recovery'])} | ${cell(r['notes'])} |`);
}
