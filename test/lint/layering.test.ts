/**
 * The layering rules in eslint.config.js catch what they claim to: a real file of each
 * folder, linted with the repository's own config, is clean as it is and is flagged once an
 * import that breaks a rule is appended. Adapters are fenced off from each other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/processes.ts';

let eslint: ESLint;

const ADAPTERS = readdirSync(join(REPO_ROOT, 'src/adapters'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

/** The restricted-import messages ESLint reports for `file` with `line` appended (none appended: the file as it is). */
async function restrictions(file: string, line = ''): Promise<string[]> {
  const code = `${readFileSync(join(REPO_ROOT, file), 'utf8')}\n${line}\n`;
  const [result] = await eslint.lintText(code, { filePath: join(REPO_ROOT, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'layering/dynamic-imports').map((m) => m.message);
}

beforeAll(() => {
  eslint = new ESLint({ cwd: REPO_ROOT });
});

describe('ESLint layering', () => {
  it('finds the adapter folders', () => {
    expect(ADAPTERS).toEqual(expect.arrayContaining(['redis', 'sqlite', 'nats', 'openai', 'offline']));
  });

  it('lets no adapter import another, by a sibling or a deeper path', async () => {
    const missed: string[] = [];
    for (const adapter of ADAPTERS) {
      const file = `src/adapters/${adapter}/index.ts`;
      expect(await restrictions(file), `${file} as it is`).toEqual([]);
      for (const other of ADAPTERS.filter((a) => a !== adapter)) {
        for (const spec of [`../${other}/index.ts`, `../../adapters/${other}/index.ts`]) {
          const found = await restrictions(file, `export * as injected from '${spec}';`);
          if (!found.some((m) => m.includes(`src/adapters/${adapter} may not import src/adapters/${other}`))) missed.push(`${file} -> ${spec}`);
        }
      }
    }
    expect(missed).toEqual([]);
  });

  it('sees a dynamic import() between adapters too', async () => {
    const found = await restrictions('src/adapters/redis/index.ts', "export const injected = () => import('../sqlite/index.ts');");
    expect(found.join('\n')).toContain('src/adapters/redis may not import src/adapters/sqlite');
  });

  it('still holds an adapter to ports, core, config and text', async () => {
    const found = await restrictions('src/adapters/redis/index.ts', "import '../../memory/rrf.ts';");
    expect(found.join('\n')).toMatch(/src\/adapters may import only adapters, core, config, text, ports/);
  });

  it.each([
    ['src/core/errors.ts', "import type { Extractor } from '../ports/extractor.ts';"],
    ['src/ports/extractor.ts', "import '../memory/rrf.ts';"],
    ['src/memory/rrf.ts', "import '../pipeline/index.ts';"],
    ['src/pipeline/extraction-job.ts', "import '../service/memory-service.ts';"],
    ['src/service/memory-service.ts', "import '../gateway/context.ts';"],
    ['src/gateway/context.ts', "import '../adapters/redis/index.ts';"],
    ['src/client/index.ts', "import '../service/api.ts';"],
    ['src/memory/rrf.ts', "const later = () => import('../app/wiring.ts'); void later;"],
  ])('flags %s importing against the layers: %s', async (file, line) => {
    expect(await restrictions(file)).toEqual([]);
    expect((await restrictions(file, line)).length).toBeGreaterThan(0);
  });

  it('lets the composition root wire adapters', async () => {
    expect(await restrictions('src/app/wiring.ts', "import '../adapters/sqlite/index.ts';\nimport '../adapters/redis/index.ts';")).toEqual([]);
  });
});
