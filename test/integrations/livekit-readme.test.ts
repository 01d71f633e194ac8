import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { expect, it } from 'vitest';
import { REPO_ROOT } from '../support/processes.ts';

/**
 * The README's "Use with LiveKit Agents" snippet type-checks against the installed
 * @livekit/agents, its OpenAI plugin and memgate/livekit (it needs a LiveKit server to run).
 */
it('the README LiveKit snippet type-checks', () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.indexOf('### Use with LiveKit Agents');
  expect(section).toBeGreaterThan(0);
  const start = readme.indexOf('```ts\n', section) + '```ts\n'.length;
  const code = readme.slice(start, readme.indexOf('```', start));
  expect(code).toContain("from 'memgate/livekit'");
  const dir = join(REPO_ROOT, '.tmp', 'readme-livekit');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'agent.ts');
  writeFileSync(file, code.replace("from 'memgate/livekit'", "from '../../src/integrations/livekit/index.ts'"));
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    types: ['node'],
  });
  const errors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  expect(errors).toEqual([]);
}, 60_000);
