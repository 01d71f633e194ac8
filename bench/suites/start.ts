import { join } from 'node:path';
import { defaultConfig } from '../../src/config/config-schema.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { estimateTokens } from '../../src/core/tokens.ts';
import { createRuntime } from '../../src/app/wiring.ts';
import { runHttpLoad } from '../load/http-load.ts';
import { runPacedHttp } from '../load/paced-http.ts';
import { seedUsers, REALISTIC } from '../load/seed-users.ts';
import { postJson, startEcho, startMemgate } from '../lib/memgate.ts';
import { prng } from '../load/turn-text.ts';
import { say } from '../lib/progress.ts';
import type { Figure } from '../lib/report-types.ts';
import { summarizeMs } from '../lib/stats.ts';
import type { Suite, SuiteOutcome } from '../lib/suite.ts';
import { below } from '../lib/targets.ts';
import { cpuFigure, measured } from './append.ts';
import { latencyFigures } from './latency-figures.ts';

/** Offered session starts per second for the target rows (1,000 concurrent 5-minute calls start ~3.3/s). */
const START_RATE_PER_S = 200;

/** Tenant of every request in open dev mode (no API keys configured). */
export const DEV_TENANT = 'default';

/**
 * Session start for users with realistic memory (50 facts, 20 recent turns):
 * autocannon on POST /v1/sessions against autocannon on a trivial uWS route,
 * then the WebSocket `start` op against uWS canned replies; both baselines send replies of
 * the same size as memgate's context reply. The cache is warmed first
 * (one start per user), so this is the steady state of returning callers.
 */
export const startSuite: Suite = {
  name: 'start',
  title: 'Session start (embedded default)',
  quick: true,
  async run(ctx): Promise<SuiteOutcome> {
    const users = ctx.profile === 'full' ? 2000 : 500;
    const agentId = `bench-start-${ctx.runId}`;
    const dir = join(ctx.tmpDir, 'start');
    const dbPath = join(dir, 'memgate.db');
    say(`  seeding ${users} users (${REALISTIC.facts} facts, ${REALISTIC.recentTurns} recent turns each)`);
    await seedUsers(dbPath, DEV_TENANT, agentId, 'caller-', users);
    const memgate = await startMemgate(dir, { sqlitePath: dbPath });
    let echo: Awaited<ReturnType<typeof startEcho>> | null = null;
    const figures: Figure[] = [];
    const details: Record<string, unknown> = { users, shape: REALISTIC, connections: 10 };
    try {
      say('  warming the context cache (one start per user)');
      let sample: { contextBlock: string; facts: unknown[]; recent: unknown[] } | null = null;
      for (let i = 0; i < users; i++) sample = await postJson(`${memgate.url}/v1/sessions`, { agentId, userId: `caller-${i}` });
      details['contextBlockTokens'] = sample ? estimateTokens(sample.contextBlock) : null;
      details['factsReturned'] = sample?.facts.length ?? null;
      details['recentReturned'] = sample?.recent.length ?? null;
      // The baseline sends replies of the same size, so the ratio is memgate's work, not bytes.
      const replyBytes = Buffer.byteLength(JSON.stringify({ op: 'context', id: 1, ...sample }));
      details['replyBytes'] = replyBytes;
      echo = await startEcho(replyBytes);
      const baseline = echo;

      const rnd = prng(42);
      const body = () => JSON.stringify({ agentId, userId: `caller-${Math.floor(rnd() * users)}` });
      const durationS = ctx.window(10, 30);
      const target = { p95Ms: below(5, 'p95 < 5 ms') };
      const http: Record<string, unknown> = {};
      // autocannon's default shape (10 connections, closed loop) is saturation: latency there
      // is mostly queueing. The paced rows offer a steady 200 starts/s (far above the start
      // rate of 1,000 concurrent calls) and show the route's own latency. Both face the target.
      {
        const spec = { path: '/v1/sessions', connections: 10, durationS, body };
        const base = await runHttpLoad('autocannon uWS trivial route, 10 connections', { url: baseline.url, ...spec });
        const mem = await runHttpLoad('autocannon memgate POST /v1/sessions, 10 connections', { url: memgate.url, ...spec });
        figures.push(...latencyFigures('HTTP POST /v1/sessions, autocannon 10 connections (saturation)', mem.summary, { label: 'uWS trivial route, same reply size', summary: base.summary }, target));
        http['autocannon'] = { memgate: mem, baseline: base };
      }
      {
        const spec = { path: '/v1/sessions', ratePerS: START_RATE_PER_S, calls: 10, warmupS: 1, durationS, body };
        const base = await runPacedHttp(`paced ${START_RATE_PER_S}/s, uWS trivial route`, { url: baseline.url, ...spec });
        const mem = await runPacedHttp(`paced ${START_RATE_PER_S}/s, memgate POST /v1/sessions`, { url: memgate.url, ...spec });
        figures.push(...latencyFigures(`HTTP POST /v1/sessions, paced ${START_RATE_PER_S}/s offered`, mem, { label: 'uWS trivial route, same reply size', summary: base }, target));
        http['paced'] = { memgate: mem, baseline: base };
      }
      details['http'] = http;

      const ws: Record<string, unknown> = {};
      for (const [name, mode] of [
        [`${START_RATE_PER_S}/s offered (100 calls, one start every 0.3–0.7 s)`, 'cadence'],
        ['saturation (10 calls closed loop)', 'saturation'],
      ] as const) {
        const spec = (url: string) => ({
          url,
          connections: mode === 'cadence' ? 100 : 10,
          mode,
          op: 'start' as const,
          cadenceMs: [300, 700] as [number, number],
          inFlight: 1,
          rampPerS: 1000,
          warmupS: 1,
          durationS: ctx.window(8, 20),
          timeoutMs: 10_000,
          agentId,
          userPrefix: 'caller-',
          userOffset: 0,
          startUsers: users,
        });
        const wsBase = await measured(`ws start, uWS canned reply, ${name}`, spec(baseline.wsUrl), baseline.pid);
        const wsMem = await measured(`ws start, memgate, ${name}`, spec(memgate.wsUrl), memgate.pid);
        figures.push(...latencyFigures(`WS start op, ${name}`, wsMem.summary, { label: 'uWS canned reply, same size', summary: wsBase.summary }, target));
        if (mode === 'saturation') figures.push(cpuFigure(`WS start op, ${name}`, wsMem, wsBase, 'uWS canned reply, same size'));
        ws[name] = { memgate: wsMem, baseline: wsBase };
      }
      details['ws'] = ws;

      // Where the time goes: the service call alone, in process, on the same warm SQLite file.
      const rt = await createRuntime(defaultConfig({ sqlite: { path: dbPath }, log: { level: 'warn' } }), { logger: silentLogger });
      try {
        const samples: number[] = [];
        const t0 = performance.now();
        for (let i = 0; i < 2000; i++) {
          const a = performance.now();
          await rt.service.startSession({ tenantId: DEV_TENANT, agentId, userId: `caller-${Math.floor(rnd() * users)}` });
          samples.push(performance.now() - a);
        }
        const inProcess = summarizeMs(samples, 0, (performance.now() - t0) / 1000);
        figures.push(...latencyFigures('MemoryService.startSession in process (no gateway, no network)', inProcess, null).filter((f) => f.metric !== 'errors'));
        details['inProcess'] = inProcess;
      } finally {
        await rt.close();
      }
      return { status: 'ok', figures, details };
    } finally {
      await Promise.all([echo?.stop(), memgate.stop()]);
    }
  },
};
