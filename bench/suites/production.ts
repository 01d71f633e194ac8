import { join } from 'node:path';
import { Redis } from 'ioredis';
import { serversMissing, startRedisAndNats, type OwnedServer } from '../baselines/redis-servers.ts';
import { runHttpLoad } from '../load/http-load.ts';
import { runOpLoad } from '../load/op-load.ts';
import { runPacedHttp } from '../load/paced-http.ts';
import { seedUsers } from '../load/seed-users.ts';
import { prng, syntheticTurn } from '../load/turn-text.ts';
import { postJson, startMemgate, type MemgateServer } from '../lib/memgate.ts';
import { say } from '../lib/progress.ts';
import type { Figure } from '../lib/report-types.ts';
import type { LatencySummary } from '../lib/stats.ts';
import { notRun, type Suite, type SuiteOutcome } from '../lib/suite.ts';
import { below, figure } from '../lib/targets.ts';
import { appendScenarios, appendSpec, measured, type AppendScenario } from './append.ts';
import { latencyFigures } from './latency-figures.ts';
import { DEV_TENANT } from './start.ts';

/**
 * Raw XADDs of synthetic turns from one ioredis connection (commands pipelined on the socket)
 * under an append scenario's load shape: the Redis baseline of a WebSocket append row.
 */
export function rawXaddBaseline(redis: Redis, keyPrefix: string, sc: AppendScenario): Promise<LatencySummary> {
  const seqs = new Map<number, number>();
  const payload = (call: number, i: number) => JSON.stringify({ ...syntheticTurn(call, i), ts: Date.now(), receivedAt: Date.now(), sessionId: `s${call}` });
  return runOpLoad(
    `raw XADD ${sc.label}`,
    { calls: sc.connections, mode: sc.mode, cadenceMs: [3000, 7000], inFlight: sc.inFlight, warmupS: sc.mode === 'cadence' ? 4 : 2, durationS: sc.durationS },
    (call) => {
      const i = (seqs.get(call) ?? 0) + 1;
      seqs.set(call, i);
      return redis.xadd(`${keyPrefix}{${call}}:turns`, '*', 'd', payload(call, i), 'k', '30');
    },
  );
}

/**
 * The append and start figures on the production stack: Redis (AOF, fsync every
 * second) for the turn buffer, context cache and lock, NATS JetStream for the job
 * bus and events, SQLite for documents, cold archive and ACUs; gateway only (no
 * inline workers, as deployed). Baselines: raw XADD and GET from one ioredis
 * connection (commands pipelined on the socket) under the same load shape.
 */
export const productionSuite: Suite = {
  name: 'production',
  title: 'Production stack on loopback: Redis + NATS JetStream (gateway only)',
  quick: false,
  async run(ctx): Promise<SuiteOutcome> {
    const missing = serversMissing();
    if (missing !== null) return notRun(missing);
    const dir = join(ctx.tmpDir, 'production');
    const servers: OwnedServer[] = [];
    let memgate: MemgateServer | null = null;
    let redis: Redis | null = null;
    const figures: Figure[] = [];
    const details: Record<string, unknown> = {
      adapters: { buffer: 'redis', cache: 'redis', lock: 'redis', bus: 'nats', events: 'nats', documents: 'sqlite', cold: 'sqlite', acus: 'sqlite' },
      inlineWorkers: false,
    };
    try {
      const { redis: r, nats: n } = await startRedisAndNats(dir, servers);
      const users = ctx.profile === 'full' ? 2000 : 500;
      const agentStart = `bench-prod-start-${ctx.runId}`;
      const dbPath = join(dir, 'memgate.db');
      await seedUsers(dbPath, DEV_TENANT, agentStart, 'caller-', users);
      memgate = await startMemgate(dir, {
        sqlitePath: dbPath,
        config: {
          adapters: details['adapters'],
          server: { inlineWorkers: false },
          redis: { url: r.url, keyPrefix: `bench${ctx.runId}:` },
          nats: { servers: n.url, stream: `BENCH_${ctx.runId}`, subjectPrefix: `bench${ctx.runId}` },
        },
      });
      redis = new Redis(r.url, { maxRetriesPerRequest: 1 });
      const appendDetails: unknown[] = [];
      details['append'] = appendDetails;

      for (const sc of appendScenarios(ctx).filter((s) => s.connections >= 1000 || s.mode === 'saturation')) {
        say(`  ${sc.label}: ${sc.durationS} s measured`);
        const base = await rawXaddBaseline(redis, `rawbench${ctx.runId}:`, sc);
        const mem = await measured(`memgate (redis) ${sc.label}`, appendSpec(sc, memgate.wsUrl, `bench-prod-append-${ctx.runId}`, `u-${sc.connections}-${sc.mode}-`), memgate.pid);
        figures.push(
          ...latencyFigures(
            `ws append on Redis+NATS, ${sc.label}`,
            mem.summary,
            { label: 'raw XADD, ioredis', summary: base },
            sc.p99TargetMs ? { p99Ms: below(sc.p99TargetMs, `p99 < ${sc.p99TargetMs} ms`) } : {},
          ),
        );
        if (sc.mode === 'saturation') figures.push(figure({ bench: `ws append on Redis+NATS, ${sc.label}`, metric: 'gateway CPU per request', value: mem.cpuUsPerReply, unit: 'µs' }));
        appendDetails.push({ scenario: sc, memgate: mem, rawXadd: base });
      }

      say(`  session start: warming ${users} users into the Redis context cache`);
      let reply = '';
      for (let i = 0; i < users; i++) reply = JSON.stringify(await postJson(`${memgate.url}/v1/sessions`, { agentId: agentStart, userId: `caller-${i}` }));
      await redis.set(`rawbench${ctx.runId}:ctx`, reply);
      details['contextReplyBytes'] = Buffer.byteLength(reply);
      const durationS = ctx.window(10, 30);
      const start: Record<string, unknown> = {};
      const target = { p95Ms: below(5, 'p95 < 5 ms') };
      const rnd = prng(7);
      const body = () => JSON.stringify({ agentId: agentStart, userId: `caller-${Math.floor(rnd() * users)}` });
      {
        const base = await runOpLoad('raw GET of a context-sized value, 10 in flight', { calls: 10, mode: 'saturation', cadenceMs: [0, 0], inFlight: 1, warmupS: 1, durationS }, () =>
          redis!.get(`rawbench${ctx.runId}:ctx`),
        );
        const mem = await runHttpLoad('autocannon memgate (redis) POST /v1/sessions, 10 connections', { url: memgate.url, path: '/v1/sessions', connections: 10, durationS, body });
        figures.push(
          ...latencyFigures('HTTP POST /v1/sessions on Redis cache, autocannon 10 connections (saturation)', mem.summary, { label: 'raw GET, ioredis, 10 in flight', summary: base }, target),
        );
        start['autocannon'] = { memgate: mem, rawGet: base };
      }
      {
        const base = await runOpLoad('raw GET of a context-sized value, paced 200/s', { calls: 10, mode: 'cadence', cadenceMs: [40, 60], inFlight: 1, warmupS: 1, durationS }, () =>
          redis!.get(`rawbench${ctx.runId}:ctx`),
        );
        const mem = await runPacedHttp('paced 200/s, memgate (redis) POST /v1/sessions', { url: memgate.url, path: '/v1/sessions', ratePerS: 200, calls: 10, warmupS: 1, durationS, body });
        figures.push(...latencyFigures('HTTP POST /v1/sessions on Redis cache, paced 200/s offered', mem, { label: 'raw GET, ioredis, paced 200/s', summary: base }, target));
        start['paced'] = { memgate: mem, rawGet: base };
      }
      details['start'] = start;
      return { status: 'ok', figures, details };
    } finally {
      redis?.disconnect();
      await memgate?.stop();
      for (const s of servers.reverse()) await s.stop();
    }
  },
};
