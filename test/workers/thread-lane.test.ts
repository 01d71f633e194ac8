import { spawnSync } from 'node:child_process';
/**
 * The embedded extraction lane on its worker thread, over a real SQLite file:
 * jobs and flushes run on the thread, and what it commits (facts, context cache,
 * ACUs) is what the gateway thread serves next. Child processes check that the
 * lane loads the way `npm start` and the tests start memgate, and lets them exit.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { getPriority } from 'node:os';
import { threadId as mainThreadId } from 'node:worker_threads';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { testConfig } from '../support/config.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { Scope } from '../../src/core/types.ts';
import type { MemgateEvent } from '../../src/ports/event-bus.ts';
import { createRuntime, usesThreadLane, type Runtime } from '../../src/app/wiring.ts';
import { rid } from '../support/fixtures.ts';
import { REPO_ROOT } from '../support/processes.ts';
import { waitFor } from '../support/wait.ts';
import { removeDir } from '../support/tmp.ts';

interface ExampleTurn {
  role: 'user' | 'agent';
  text: string;
}
const example = JSON.parse(readFileSync(join(REPO_ROOT, 'config/examples/real-estate-calls.json'), 'utf8')) as { calls: Array<{ turns: ExampleTurn[] }> };
const [call1, call2, call3] = example.calls.map((c) => c.turns) as [ExampleTurn[], ExampleTurn[], ExampleTurn[]];

const dir = mkdtempSync(join(tmpdir(), 'memgate-thread-lane-'));
afterAll(() => removeDir(dir));

const runtimes: Runtime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
});

async function embedded(tokenThreshold: number, path = join(dir, `${rid('db-')}.db`), niceness?: number, laneCpuShare?: number, idlePolicy?: boolean): Promise<Runtime> {
  const worker = { retryDelayMs: 50, ...(niceness === undefined ? {} : { niceness }), ...(laneCpuShare === undefined ? {} : { laneCpuShare }), ...(idlePolicy === undefined ? {} : { idlePolicy }) };
  const config = testConfig({ sqlite: { path }, log: { level: 'silent' }, memory: { tokenThreshold }, worker });
  const runtime = await createRuntime(config, { logger: silentLogger });
  runtimes.push(runtime);
  runtime.startWorkers();
  return runtime;
}

async function appendAll(runtime: Runtime, scope: Scope, sessionId: string, turns: readonly ExampleTurn[]): Promise<void> {
  for (const t of turns) await runtime.service.appendTurn(scope, sessionId, { role: t.role, text: t.text });
}

describe('embedded extraction on a worker thread', () => {
  it('runs only with the embedded bus on a SQLite file', () => {
    expect(usesThreadLane(testConfig({ sqlite: { path: '/tmp/x.db' } }))).toBe(true);
    expect(usesThreadLane(testConfig({ sqlite: { path: ':memory:' } }))).toBe(false);
    expect(usesThreadLane(testConfig({ sqlite: { path: '/tmp/x.db' }, adapters: { bus: 'nats' } }))).toBe(false);
  });

  it('keeps extraction inline on an in-memory database', async () => {
    const runtime = await embedded(200, ':memory:');
    await runtime.workersReady();
    expect(runtime.extractionThread()).toBeNull();
    const scope: Scope = { tenantId: rid('t-'), agentId: 'real-estate', userId: rid('u-') };
    const { sessionId } = await runtime.service.startSession(scope);
    await appendAll(runtime, scope, sessionId, call1);
    expect((await runtime.service.flush(scope)).ran).toBe(true);
  });

  it('extracts a threshold crossing on the thread; the gateway thread serves the facts, the ACUs and the flush', async () => {
    const runtime = await embedded(200);
    const events: MemgateEvent[] = [];
    runtime.ports.events.subscribe((e) => events.push(e));
    const scope: Scope = { tenantId: rid('t-'), agentId: 'real-estate', userId: rid('u-') };
    const { sessionId } = await runtime.service.startSession(scope);
    // The thread asks the gateway to remove what it extracted: the append's file has one writer.
    const removals = vi.spyOn(runtime.ports.buffer, 'remove');
    await appendAll(runtime, scope, sessionId, [...call1, ...call2]);

    await waitFor(() => events.some((e) => e.type === 'extraction.finished' && e.userId === scope.userId), 15_000, 'extraction.finished on the main event bus');
    await waitFor(async () => (await runtime.ports.bus.depth()) === 0, 15_000, 'the job bus to drain');
    const left = await runtime.service.bufferedTurns(scope);
    expect(left.length).toBeLessThan(call1.length + call2.length);
    const removed = removals.mock.calls.flatMap(([s, ids]) => (s.userId === scope.userId ? ids : []));
    expect(removed.length).toBe(call1.length + call2.length - left.length);
    expect(left.filter((t) => removed.includes(t.turnId))).toEqual([]);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['extraction.started', 'extraction.finished', 'acus.indexed']));
    const stats = runtime.extractionThread()!;
    expect(stats.runsDone).toBeGreaterThanOrEqual(1);
    expect(stats.threadId).not.toBe(mainThreadId);

    // A flush is a run on the thread too: the gateway thread never takes the user's lock itself.
    // The jobs read every turn already, so it finds nothing new and re-extracts nothing.
    const localLock = vi.spyOn(runtime.ports.lock, 'acquire');
    const flushed = await runtime.service.flush(scope);
    expect(flushed).toMatchObject({ ran: false, skipped: 'up-to-date', factsExtracted: 0 });
    expect(localLock).not.toHaveBeenCalled();
    expect(runtime.extractionThread()!.runsDone).toBe(stats.runsDone + 1);
    expect((await runtime.service.bufferedTurns(scope)).length).toBeLessThanOrEqual(runtime.config.memory.maxKeptTurns);

    // What the thread committed (hot document → context cache, ACUs) is what this thread reads.
    const context = await runtime.service.startSession(scope);
    expect(context.contextBlock).toMatch(/Rajiv Kumar/);
    expect(context.facts.length + context.possibly.length).toBeGreaterThan(0);
    const search = await runtime.service.search(scope, 'Which bank is the home loan with?');
    expect(search.results[0]?.source).not.toBe('cold');
    expect(
      search.results
        .slice(0, 3)
        .map((r) => r.text)
        .join(' '),
    ).toMatch(/HDFC/);
  });

  it("the gateway thread's vector search sees ACUs the thread indexed after its cache was filled", async () => {
    const runtime = await embedded(1_000_000_000);
    const scope: Scope = { tenantId: rid('t-'), agentId: 'real-estate', userId: rid('u-') };
    const { sessionId } = await runtime.service.startSession(scope);
    await appendAll(runtime, scope, sessionId, call1);
    expect((await runtime.service.flush(scope)).acusIndexed).toBeGreaterThan(0);
    const [query] = await runtime.ports.embedder.embed(['budget and home loan for the flat']);
    const before = await runtime.ports.acus.search(scope, query!, 1_000);
    expect(before.length).toBe(await runtime.ports.acus.count(scope));

    await appendAll(runtime, scope, sessionId, [...call2, ...call3]);
    const second = await runtime.service.flush(scope);
    expect(second.acusIndexed).toBeGreaterThan(0);
    const after = await runtime.ports.acus.search(scope, query!, 1_000);
    expect(after.length).toBe(before.length + second.acusIndexed);
    const seen = new Set(before.map((h) => h.acu.id));
    expect(after.filter((h) => !seen.has(h.acu.id)).length).toBe(second.acusIndexed);
  });

  it.runIf(existsSync('/proc/thread-self'))('runs the extraction thread at the configured nice value, the gateway thread at its own', async () => {
    const base = getPriority();
    const runtime = await embedded(1_000_000_000, join(dir, `${rid('db-')}.db`), 7);
    await runtime.workersReady();
    const { tid, niceness } = runtime.extractionThread()!;
    expect(tid).not.toBe(process.pid);
    // Read straight from the kernel, not from what the thread said it did.
    const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
    const kernelNice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    expect(kernelNice).toBe(Math.min(19, base + 7));
    expect(niceness).toBe(kernelNice);
    expect(getPriority()).toBe(base);
  });

  // Field 41 of a thread's stat is its policy: 5 is SCHED_IDLE, 0 SCHED_OTHER.
  const kernelPolicy = (tid: number | null) => {
    const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[41 - 3]);
  };
  const hasChrt = existsSync('/proc/thread-self') && spawnSync('chrt', ['--version']).status === 0;

  it.runIf(hasChrt)('runs the extraction thread under SCHED_IDLE by default, the gateway thread under its own policy', async () => {
    const runtime = await embedded(1_000_000_000);
    await runtime.workersReady();
    const { tid, policy } = runtime.extractionThread()!;
    expect(kernelPolicy(tid)).toBe(5);
    expect(policy).toBe('idle');
    expect(kernelPolicy(process.pid)).toBe(0);
  });

  it.runIf(existsSync('/proc/thread-self'))('keeps the normal policy when worker.idlePolicy is false', async () => {
    const runtime = await embedded(1_000_000_000, join(dir, `${rid('db-')}.db`), undefined, undefined, false);
    await runtime.workersReady();
    const { tid, policy } = runtime.extractionThread()!;
    expect(kernelPolicy(tid)).toBe(0);
    expect(policy).toBe('normal');
  });

  it('keeps the gateway event loop turning while the thread extracts a big window', async () => {
    const runtime = await embedded(1_000_000_000);
    const scope: Scope = { tenantId: rid('t-'), agentId: 'real-estate', userId: rid('u-') };
    const { sessionId } = await runtime.service.startSession(scope);
    const all = [...call1, ...call2, ...call3];
    for (let i = 0; i < 300; i++) {
      const t = all[i % all.length]!;
      await runtime.service.appendTurn(scope, sessionId, { role: t.role, text: `${t.text} (turn ${i})` });
    }
    await runtime.workersReady();
    let last = performance.now();
    let maxGapMs = 0;
    const probe = setInterval(() => {
      const now = performance.now();
      maxGapMs = Math.max(maxGapMs, now - last);
      last = now;
    }, 1);
    const report = await runtime.service.flush(scope).finally(() => clearInterval(probe));
    // Recorded, not asserted (timing belongs to benchmarks): inline, this window stalls the loop for its whole run.
    console.log(`thread lane: ${report.turnsRead}-turn window extracted in ${report.durationMs} ms; max main-thread event-loop gap ${maxGapMs.toFixed(1)} ms`);
    expect(report.turnsArchived).toBeGreaterThan(250);
    expect(runtime.extractionThread()!.threadId).not.toBe(mainThreadId);
  });
});

describe("the lane's CPU budget", () => {
  it('counts the thread busy time, and a flush goes ahead of a spent budget: someone waits for it', async () => {
    // A hundredth of a core: after the first big run, background runs would wait minutes.
    const runtime = await embedded(1_000_000_000, join(dir, `${rid('db-')}.db`), undefined, 0.01);
    const scope: Scope = { tenantId: rid('t-'), agentId: 'real-estate', userId: rid('u-') };
    const { sessionId } = await runtime.service.startSession(scope);
    await runtime.workersReady();
    const all = [...call1, ...call2, ...call3];
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 150; i++) {
        const t = all[i % all.length]!;
        await runtime.service.appendTurn(scope, sessionId, { role: t.role, text: `${t.text} (round ${round}, turn ${i})` });
      }
      const report = await runtime.service.flush(scope);
      expect(report.turnsArchived).toBeGreaterThan(100);
    }
    // The runs' busy time is on the budget's books: at 0.01 of a core a background run would now wait
    // about (busy ms − 250) × 100 ms, far past this test's timeout; the flushes did not.
    expect(runtime.extractionThread()!.cpuMs).toBeGreaterThan(0);
  });
});

describe('the lane in a process of its own', () => {
  const tsxCli = join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs');
  const script = join(REPO_ROOT, 'test/workers/support/lane-process.ts');
  // `node --import tsx` (the child-process tests), the tsx CLI (`npm start`) and tsx's register() API
  // (bin/memgate.mjs) each leave different flags to a worker thread.
  const registered = `import { register } from 'tsx/esm/api'; register(); await import(${JSON.stringify(pathToFileURL(script).href)});`;
  it.each([
    ['node --import tsx', ['--import', 'tsx', script]],
    ['tsx CLI', [tsxCli, script]],
    ['tsx register() API', ['--input-type=module', '-e', registered]],
  ])('%s: the thread extracts, and the process exits by itself after close()', async (_name, args) => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MEMGATE_') && k !== 'NODE_OPTIONS'));
    const child = spawn(process.execPath, [...args, join(dir, `${rid('proc-')}.db`)], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await exited.finally(() => clearTimeout(timer));
    expect(code, `the process did not exit cleanly by itself; stderr:\n${err}`).toBe(0);
    const result = JSON.parse(out.trim()) as { mainThreadId: number; ran: boolean; turnsRead: number; stats: { threadId: number; runsDone: number } };
    expect(result).toMatchObject({ ran: true, turnsRead: 6, stats: { runsDone: 1 } });
    expect(result.stats.threadId).not.toBe(result.mainThreadId);
  });
});
