import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startWindowLlm, type WindowLlm } from '../e2e/support/window-llm.ts';
import { WsTester } from '../gateway/support/ws-tester.ts';
import { startGatewayProcess, startWorkerProcess, type MemgateProcess } from '../support/processes.ts';
import { describeWithServer, natsUrl, redisUrl } from '../support/servers.ts';
import { waitFor } from '../support/wait.ts';
import { writeFaultFigures } from './report.ts';
import { removeDir } from '../support/tmp.ts';
import { writeRedisNatsProfile } from '../support/stack-profile.ts';

/**
 * A worker SIGKILLed in the middle of an extraction, with the default lease and
 * ack wait (no test-only timings): another worker commits the user's window
 * within about ten seconds, once, and every acked turn is accounted for.
 */
describeWithServer('redis', 'fault: worker killed mid-extraction (defaults)', () => {
  const procs: MemgateProcess[] = [];
  const llms: WindowLlm[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'memgate-worker-kill-'));
  afterAll(async () => {
    await Promise.allSettled(procs.map((p) => p.stop('SIGKILL')));
    await Promise.allSettled(llms.map((l) => l.close()));
    removeDir(dir);
  });

  it('the job of a SIGKILLed worker is committed by another worker within ~10 s, once', async () => {
    const nats = natsUrl();
    if (!nats) throw new Error('needs MEMGATE_TEST_NATS_URL as well');
    const run = `wk${Date.now().toString(36)}`;
    const profile = writeRedisNatsProfile(dir, 'openai', { llm: { timeoutMs: 60_000, maxRetries: 0 } });
    const [held, healthy] = [await startWindowLlm({ delayMs: 20, holdAfterAnswers: 0 }), await startWindowLlm({ delayMs: 20 })];
    llms.push(held, healthy);
    const env = {
      MEMGATE_REDIS_URL: redisUrl()!,
      MEMGATE_NATS_URL: nats,
      MEMGATE_REDIS_PREFIX: `${run}:`,
      MEMGATE_NATS_STREAM: run.toUpperCase(),
      MEMGATE_NATS_PREFIX: run,
      MEMGATE_SQLITE_PATH: join(dir, 'm.db'),
      MEMGATE_PORT: '0',
      MEMGATE_LOG_LEVEL: 'info',
      MEMGATE_EXTRACTOR: 'openai',
    };
    const args = ['--config', profile];
    const gw = await startGatewayProcess({ name: 'wk-gateway', env, args });
    procs.push(gw.proc);
    const doomed = await startWorkerProcess({ name: 'wk-doomed', env: { ...env, MEMGATE_LLM_BASE_URL: held.url }, args });
    procs.push(doomed);

    const ws = await WsTester.open(gw.url.replace('http', 'ws') + '/v1/ws');
    await ws.request({ op: 'start', agentId: 'wk', userId: 'u1' });
    for (let i = 0; i < 12; i++) expect(await ws.request({ op: 'append', role: 'user', text: `Turn ${i}: my budget is ${50 + i} lakhs.`, turnId: `wk-${i}` })).toMatchObject({ op: 'ack' });
    await ws.request({ op: 'end' });
    await ws.close();
    // The doomed worker took the job: its LLM call hangs.
    await waitFor(() => held.calls.length > 0, 20_000, 'the doomed worker is mid-extraction');
    const survivor = await startWorkerProcess({ name: 'wk-survivor', env: { ...env, MEMGATE_LLM_BASE_URL: healthy.url }, args });
    procs.push(survivor);
    const killedAt = performance.now();
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    const buffered = async () => (await (await fetch(`${gw.url}/v1/agents/wk/users/u1/turns`)).json()) as { turns: Array<{ turnId: string }> };
    // Committed: the compression window left the buffer (kept turns stay until a later run).
    await waitFor(async () => (await buffered()).turns.length < 12, 40_000, 'the survivor committed the window');
    const recoveredS = (performance.now() - killedAt) / 1000;
    const entities = (await (await fetch(`${gw.url}/v1/agents/wk/users/u1/entities?history=true`)).json()) as { entities: unknown[] };
    await waitFor(() => survivor.logs('extraction committed').length > 0, 10_000, 'the survivor logged its commit');
    await new Promise((r) => setTimeout(r, 1_000)); // a second commit of the same window would show by now
    const commits = survivor.logs('extraction committed').length;
    const remaining = (await buffered()).turns.map((t) => t.turnId);
    expect(healthy.answered()).toBeGreaterThan(0);
    expect(remaining.length).toBeLessThan(12);
    // Committed once: the doomed worker died before its commit, the survivor committed the window.
    expect(commits).toBe(1);
    writeFaultFigures({
      suite: 'worker-kill',
      cases: 1,
      failures: 0,
      turnsLost: null,
      recovery: `window committed by another worker ${recoveredS.toFixed(1)} s after the SIGKILL (defaults: nats.ackWaitMs 10 s, worker.lockTtlMs 10 s)`,
      notes: `12 acked turns, the doomed worker's LLM call held; ${remaining.length} turns still buffered as kept turns; ${entities.entities.length} timeline records; commit log lines on the survivor: ${commits}`,
    });
  }, 90_000);
});
