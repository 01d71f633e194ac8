import { join } from 'node:path';
import OpenAI from 'openai';
import { defaultConfig } from '../../src/config/config-schema.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { estimateTokens } from '../../src/core/tokens.ts';
import type { Scope } from '../../src/core/types.ts';
import { createRuntime, type Runtime } from '../../src/app/wiring.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../../test/support/fake-openai.ts';
import { memgateFakeReplies } from '../load/fake-llm-replies.ts';
import { syntheticTurn } from '../load/turn-text.ts';
import { startProgress, say } from '../lib/progress.ts';
import type { Figure } from '../lib/report-types.ts';
import { round3, summarizeMs, type LatencySummary } from '../lib/stats.ts';
import type { Suite, SuiteOutcome } from '../lib/suite.ts';
import { below, figure } from '../lib/targets.ts';
import { DEV_TENANT } from './start.ts';

/** Default delay of the fake LLM (the "answers in 300 ms"). */
export const FAKE_LLM_DELAY_MS = Number(process.env['MEMGATE_BENCH_FAKE_LLM_DELAY_MS'] ?? 300);

interface Lane {
  rt: Runtime;
  threshold: number;
  /** Resolves when the user's next extraction commits (or fails). */
  committed(userId: string): Promise<{ at: number; ok: boolean }>;
  stop(): Promise<void>;
}

async function startLane(ctx: { tmpDir: string }, fake: FakeOpenAI, workers: number, name: string): Promise<Lane> {
  const rt = await createRuntime(
    defaultConfig({
      sqlite: { path: join(ctx.tmpDir, 'extraction', `${name}.db`) },
      log: { level: 'warn' },
      adapters: { extractor: 'openai' },
      llm: { baseURL: fake.url, apiKey: 'bench', model: 'fake-300ms', timeoutMs: 30_000, maxRetries: 1 },
      worker: { concurrency: workers, retryDelayMs: 200 },
    }),
    { logger: silentLogger },
  );
  const waiters = new Map<string, Array<(r: { at: number; ok: boolean }) => void>>();
  const unsubscribe = rt.ports.events.subscribe((e) => {
    if (e.type !== 'extraction.finished' && e.type !== 'extraction.failed') return;
    const at = performance.now();
    for (const w of waiters.get(e.userId) ?? []) w({ at, ok: e.type === 'extraction.finished' });
    waiters.delete(e.userId);
  });
  rt.startWorkers();
  return {
    rt,
    threshold: rt.config.memory.tokenThreshold,
    committed: (userId) => new Promise((resolve) => waiters.set(userId, [...(waiters.get(userId) ?? []), resolve])),
    async stop() {
      unsubscribe();
      await rt.close();
    },
  };
}

/** Append turns to `scope` until one more would cross the threshold; returns the next turn index. */
async function fillBelowThreshold(lane: Lane, scope: Scope, sessionId: string, callIndex: number): Promise<number> {
  let pending = 0;
  let i = 0;
  for (;;) {
    const t = syntheticTurn(callIndex, i);
    const tokens = estimateTokens(t.text);
    if (pending + tokens >= lane.threshold) return i;
    await lane.rt.service.appendTurn(scope, sessionId, { role: t.role, text: t.text, speaker: t.speaker });
    pending += tokens;
    i += 1;
  }
}

/** Append the turn that crosses the threshold; returns the instant of the crossing append. */
async function cross(lane: Lane, scope: Scope, sessionId: string, callIndex: number, i: number): Promise<number> {
  const t = syntheticTurn(callIndex, i);
  const at = performance.now();
  await lane.rt.service.appendTurn(scope, sessionId, { role: t.role, text: t.text, speaker: t.speaker });
  return at;
}

/** One fake-LLM round trip through the openai SDK: the floor of any window. */
async function llmRoundTrip(fake: FakeOpenAI, n: number): Promise<LatencySummary> {
  const client = new OpenAI({ baseURL: fake.url, apiKey: 'bench', maxRetries: 0 });
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const a = performance.now();
    await client.chat.completions.create({ model: 'fake', messages: [{ role: 'user', content: 'ping' }] });
    samples.push(performance.now() - a);
  }
  return summarizeMs(samples, 0, samples.reduce((a, b) => a + b, 0) / 1000);
}

/**
 * The extraction lane against a local fake OpenAI-compatible server that answers
 * after 300 ms: time from the append that crosses the token threshold to the
 * commit event (one window at a time), then windows per second with 1, 2 and 4
 * workers when many users cross at once.
 */
export const extractionSuite: Suite = {
  name: 'extraction',
  title: `Extraction lane, fake LLM answering in ${FAKE_LLM_DELAY_MS} ms`,
  quick: true,
  async run(ctx): Promise<SuiteOutcome> {
    const windows = ctx.profile === 'full' ? 60 : 20;
    const fake = await startFakeOpenAI({ delayMs: FAKE_LLM_DELAY_MS });
    fake.onChat(memgateFakeReplies);
    const figures: Figure[] = [];
    const details: Record<string, unknown> = { windows, fakeDelayMs: FAKE_LLM_DELAY_MS, extractor: 'openai (fake server)', embedder: 'offline' };
    try {
      const rtt = await llmRoundTrip(fake, 5);
      details['llmRoundTrip'] = rtt;

      say(`  latency: ${windows} windows, one at a time, 1 worker`);
      const lane = await startLane(ctx, fake, 1, 'latency');
      const latencies: number[] = [];
      let failures = 0;
      const calls0 = fake.chatRequests.length;
      try {
        const progress = startProgress('threshold → commit', () => `${latencies.length}/${windows} windows`);
        for (let u = 0; u < windows; u++) {
          const scope: Scope = { tenantId: DEV_TENANT, agentId: `bench-extract-${ctx.runId}`, userId: `lat-${u}` };
          const { sessionId } = await lane.rt.service.startSession(scope);
          const next = await fillBelowThreshold(lane, scope, sessionId, u);
          const done = lane.committed(scope.userId);
          const t0 = await cross(lane, scope, sessionId, u, next);
          const r = await done;
          if (!r.ok) failures += 1;
          else latencies.push(r.at - t0);
        }
        progress.stop(`done: ${latencies.length} windows committed, ${failures} failed`);
      } finally {
        await lane.stop();
      }
      const latency = summarizeMs(latencies, failures, latencies.reduce((a, b) => a + b, 0) / 1000);
      details['latency'] = latency;
      details['llmCallsPerWindow'] = round3((fake.chatRequests.length - calls0) / windows);
      const bench = 'threshold crossing → commit, 1 worker';
      const rttBase = { label: 'one fake-LLM round trip', value: rtt.p50Ms };
      figures.push(figure({ bench, metric: 'p50', value: latency.p50Ms, unit: 'ms', baseline: rttBase }));
      figures.push(figure({ bench, metric: 'p95', value: latency.p95Ms, unit: 'ms', baseline: rttBase, target: below(3000, 'window < 3 s (p95)') }));
      figures.push(figure({ bench, metric: 'max', value: latency.maxMs, unit: 'ms', baseline: rttBase, target: below(3000, 'window < 3 s (max)') }));
      figures.push(figure({ bench, metric: 'failed windows', value: failures, unit: '' }));

      const throughput: Record<string, unknown> = {};
      for (const workers of [1, 2, 4]) {
        say(`  throughput: ${windows} users crossing at once, ${workers} worker(s)`);
        const l = await startLane(ctx, fake, workers, `throughput-${workers}`);
        try {
          const users = Array.from({ length: windows }, (_, u) => ({ scope: { tenantId: DEV_TENANT, agentId: `bench-extract-${ctx.runId}`, userId: `tp${workers}-${u}` } as Scope, u }));
          const prepared: Array<{ scope: Scope; sessionId: string; u: number; next: number }> = [];
          for (const { scope, u } of users) {
            const { sessionId } = await l.rt.service.startSession(scope);
            prepared.push({ scope, sessionId, u, next: await fillBelowThreshold(l, scope, sessionId, 1000 + u) });
          }
          let committed = 0;
          const progress = startProgress(`${workers} worker(s)`, () => `${committed}/${windows} windows committed`);
          const commits = prepared.map((p) => l.committed(p.scope.userId).then((r) => ((committed += 1), r)));
          const t0 = performance.now();
          const crossings: number[] = [];
          for (const p of prepared) crossings.push(await cross(l, p.scope, p.sessionId, 1000 + p.u, p.next));
          const results = await Promise.all(commits);
          const elapsedS = (Math.max(...results.map((r) => r.at)) - t0) / 1000;
          const ok = results.filter((r) => r.ok).length;
          const perS = round3(ok / elapsedS);
          const queued = summarizeMs(
            results.map((r, i) => r.at - crossings[i]!),
            windows - ok,
            elapsedS,
          );
          progress.stop(`done: ${ok}/${windows} in ${elapsedS.toFixed(2)} s = ${perS} windows/s`);
          throughput[`${workers}`] = { windowsPerS: perS, elapsedS, committed: ok, crossingToCommit: queued };
          figures.push(
            figure({
              bench: `windows per second, ${workers} worker(s), ${windows} users at once`,
              metric: 'windows/s',
              value: perS,
              unit: '/s',
              baseline: { label: `ideal: ${workers} per LLM round trip`, value: round3(workers / (rtt.p50Ms / 1000)) },
            }),
          );
        } finally {
          await l.stop();
        }
      }
      details['throughput'] = throughput;
      return { status: 'ok', figures, details };
    } finally {
      await fake.close();
    }
  },
};
