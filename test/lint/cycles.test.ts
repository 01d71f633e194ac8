/**
 * `npm run lint:cycles` must see what it claims to: every import of every file (type-only,
 * re-exports and dynamic `import()` included), and fail on a cycle of any kind. The
 * script is run exactly as package.json has it, in a temporary copy of the repository's
 * sources, first clean, then with cycles injected.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/processes.ts';
import { removeDir } from '../support/tmp.ts';

/** The folders the check covers (package.json's lint:cycles globs), and the files in them it must read. */
const FOLDERS = ['src', 'test', 'bench', 'scripts', 'bin', 'dashboard'];
const SOURCE = /\.(ts|mjs|js)$/;

let dir: string;

function runCycles(extra: string[] = []): { status: number | null; output: string } {
  const r = spawnSync('npm', ['run', '--silent', 'lint:cycles', '--', ...extra], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, output: `${r.stdout}\n${r.stderr}` };
}

function sourceFiles(): string[] {
  return FOLDERS.flatMap((f) =>
    readdirSync(join(dir, f), { recursive: true, encoding: 'utf8' })
      .filter((p) => SOURCE.test(p) && !p.includes('vendor/') && !p.endsWith('.d.ts'))
      .map((p) => join(f, p)),
  ).filter((p) => !(p.startsWith('scripts/') && p.endsWith('.js')));
}

/** Every relative import TypeScript's own pre-processor finds, as `from -> to` (both relative to the copy). */
function typescriptEdges(): Set<string> {
  const edges = new Set<string>();
  for (const file of sourceFiles()) {
    const info = ts.preProcessFile(readFileSync(join(dir, file), 'utf8'), true, true);
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = normalize(join(dirname(file), fileName));
      if (existsSync(join(dir, target)) && SOURCE.test(target)) edges.add(`${file} -> ${target}`);
    }
  }
  return edges;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'memgate-cycles-'));
  for (const f of FOLDERS) cpSync(join(REPO_ROOT, f), join(dir, f), { recursive: true, filter: (p) => !p.includes('/vendor') && !p.includes('/results') });
  for (const f of ['package.json', 'tsconfig.json']) cpSync(join(REPO_ROOT, f), join(dir, f));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'));
});

afterAll(() => removeDir(dir));

describe('lint:cycles', () => {
  it('passes the repository as it is and sees every import edge TypeScript sees', () => {
    const { status, output } = runCycles(['-o', 'dpdm.json']);
    expect(output).toContain('no circular dependency');
    expect(status).toBe(0);
    const tree = JSON.parse(readFileSync(join(dir, 'dpdm.json'), 'utf8')) as { tree: Record<string, Array<{ id: string | null }> | null> };
    const seen = new Set<string>();
    for (const [from, deps] of Object.entries(tree.tree)) for (const d of deps ?? []) if (d.id && !d.id.startsWith('node_modules')) seen.add(`${from} -> ${relative('.', d.id)}`);
    const expected = typescriptEdges();
    expect(expected.size).toBeGreaterThan(600);
    expect([...expected].filter((e) => !seen.has(e))).toEqual([]);
  });

  it('fails on an injected value cycle, a type-only cycle and a dynamic-import cycle', () => {
    const inject = {
      value: ['src/memory/rrf.ts', 'src/memory/search-cascade.ts'],
      type: ['src/core/extraction-schema.ts', 'src/ports/extractor.ts'],
      dynamic: ['src/text/numbers.ts', 'src/text/money.ts'],
    };
    appendFileSync(join(dir, inject.value[0]!), "\nimport * as cascade from './search-cascade.ts';\nexport const injectedCycle = cascade;\n");
    appendFileSync(join(dir, inject.type[0]!), "\nimport type { Extractor } from '../ports/extractor.ts';\nexport type InjectedCycle = Extractor;\n");
    appendFileSync(join(dir, inject.dynamic[0]!), "\nexport const injectedCycle = () => import('./money.ts');\n");

    const { status, output } = runCycles();
    expect(status).toBe(1);
    const cycles = output.split('\n').filter((l) => /^\s*\d+\)/.test(l));
    for (const [kind, [a, b]] of Object.entries(inject))
      expect(
        cycles.some((c) => c.includes(a!) && c.includes(b!)),
        `${kind} cycle ${a} <-> ${b} reported in:\n${output}`,
      ).toBe(true);
  });
});
