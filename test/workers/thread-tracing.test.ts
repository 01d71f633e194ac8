/**
 * A traced host: memgate in a process whose OpenTelemetry SDK is preloaded with `--import` (as the
 * README shows), extracting on its worker thread. The thread imports the same preload, so the
 * run's spans are recorded there, in their own trace, linked to the span that asked for the flush.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { rid } from '../support/fixtures.ts';
import { REPO_ROOT } from '../support/processes.ts';
import { removeDir } from '../support/tmp.ts';

const dir = mkdtempSync(join(tmpdir(), 'memgate-thread-tracing-'));
afterAll(() => removeDir(dir));

interface ExportedSpan {
  threadId: number;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  links: string[];
  status: number;
  attributes: Record<string, unknown>;
}

it("the extraction thread records the run's spans under the host's preloaded SDK, linked to the flush", async () => {
  const spansFile = join(dir, 'spans.jsonl');
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MEMGATE_') && k !== 'NODE_OPTIONS')), MEMGATE_TEST_SPANS_FILE: spansFile };
  const args = ['--import', './test/support/otel-file-sdk.mjs', '--import', 'tsx', 'test/workers/support/lane-process.ts', join(dir, `${rid('proc-')}.db`)];
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve)).finally(() => clearTimeout(timer));
  expect(code, `stderr:\n${err}`).toBe(0);
  const result = JSON.parse(out.trim()) as { mainThreadId: number; ran: boolean; stats: { threadId: number } };
  expect(result.ran).toBe(true);

  expect(existsSync(spansFile)).toBe(true);
  const spans = readFileSync(spansFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ExportedSpan);
  const flush = spans.find((s) => s.name === 'lane-process.flush')!;
  expect(flush.threadId).toBe(result.mainThreadId);
  const runs = spans.filter((s) => s.name === 'memgate.extraction');
  expect(runs).toHaveLength(1);
  const run = runs[0]!;
  expect(run.threadId).toBe(result.stats.threadId);
  expect(run.threadId).not.toBe(result.mainThreadId);
  expect(run.parentSpanId).toBeNull();
  expect(run.traceId).not.toBe(flush.traceId);
  expect(run.links).toEqual([flush.spanId]);
  expect(run.attributes).toMatchObject({
    'gen_ai.operation.name': 'update_memory',
    'gen_ai.memory.store.id': `real-estate/u-${child.pid}`,
    'memgate.extraction.ran': true,
    'memgate.extraction.turns': 6,
  });
  for (const stage of ['memgate.extraction.read', 'memgate.extraction.plan', 'memgate.extraction.commit']) {
    const span = spans.find((s) => s.name === stage);
    expect(span?.parentSpanId, stage).toBe(run.spanId);
    expect(span?.threadId).toBe(run.threadId);
  }
});
