import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { serversMissing, startRedisAndNats, type OwnedServer } from '../baselines/redis-servers.ts';
import { startMemgate, type MemgateServer } from '../lib/memgate.ts';
import { cpuSeconds } from '../lib/processes.ts';
import { say } from '../lib/progress.ts';
import type { Figure } from '../lib/report-types.ts';
import { notRun, type Suite, type SuiteOutcome } from '../lib/suite.ts';
import { below, figure } from '../lib/targets.ts';
import { runWsLoad } from '../load/ws-load.ts';
import { appendSpec, type AppendScenario } from './append.ts';
import { latencyFigures } from './latency-figures.ts';
import { rawXaddBaseline } from './production.ts';

/** Resident and peak resident memory of a process (VmRSS, VmHWM), MiB; nulls off Linux. */
function memoryMiB(pid: number): { rss: number | null; peak: number | null } {
  const file = `/proc/${pid}/status`;
  if (!existsSync(file)) return { rss: null, peak: null };
  const status = readFileSync(file, 'utf8');
  const kb = (field: string) => {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
    return m ? Math.round(Number(m[1]) / 1024) : null;
  };
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Calls of the run: MEMGATE_BENCH_CLUSTER_CALLS, else 5,000 (--full) or 1,000. */
function callCount(full: boolean): number {
  const raw = process.env['MEMGATE_BENCH_CLUSTER_CALLS'];
  if (raw === undefined || raw === '') return full ? 5000 : 1000;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 2) throw new Error(`MEMGATE_BENCH_CLUSTER_CALLS must be an integer of at least 2, not "${raw}"`);
  return n;
}

/**
 * Turn append at voice cadence over a cluster: two gateways (`memgate serve`, no inline
 * workers, as deployed behind a load balancer) on one private Redis (AOF, fsync every
 * second) and one NATS JetStream, documents in one SQLite file. Half the calls go to each
 * gateway, each half from its own generator process; the acks of both are merged. The
 * baseline is a raw XADD from one ioredis connection under the same load shape, measured
 * back to back with it; the gateways' CPU and memory are read from /proc around the run.
 * No workers run: extraction jobs queue on NATS, so the gateways' cost is what is measured.
 */
export const clusterSuite: Suite = {
  name: 'cluster',
  title: 'Two gateways on Redis + NATS JetStream: append at voice cadence',
  quick: false,
  async run(ctx): Promise<SuiteOutcome> {
    const missing = serversMissing();
    if (missing !== null) return notRun(missing);
    const calls = callCount(ctx.profile === 'full');
    const sc: AppendScenario = {
      label: `${calls.toLocaleString('en')} calls over 2 gateways, voice cadence`,
      connections: calls,
      mode: 'cadence',
      inFlight: 1,
      durationS: ctx.window(15, 60),
      p99TargetMs: 10,
    };
    const dir = join(ctx.tmpDir, 'cluster');
    const servers: OwnedServer[] = [];
    const gateways: MemgateServer[] = [];
    let redis: Redis | null = null;
    const adapters = { buffer: 'redis', cache: 'redis', lock: 'redis', bus: 'nats', events: 'nats', documents: 'sqlite', cold: 'sqlite', acus: 'sqlite' };
    const details: Record<string, unknown> = { adapters, inlineWorkers: false, gateways: 2, workers: 0, scenario: sc, generator: 'ws@8 JSON text frames, one forked process per gateway, 127.0.0.1' };
    try {
      const { redis: r, nats: n } = await startRedisAndNats(dir, servers);
      const config = {
        adapters,
        server: { inlineWorkers: false },
        redis: { url: r.url, keyPrefix: `benchcl${ctx.runId}:` },
        nats: { servers: n.url, stream: `BENCHCL_${ctx.runId}`, subjectPrefix: `benchcl${ctx.runId}` },
      };
      const sqlitePath = join(dir, 'memgate.db');
      say('  starting gateways A and B');
      gateways.push(...(await Promise.all(['a', 'b'].map((g) => startMemgate(join(dir, `gateway-${g}`), { config, sqlitePath })))));
      redis = new Redis(r.url, { maxRetriesPerRequest: 1 });

      say(`  raw XADD baseline, ${sc.label}: ${sc.durationS} s measured`);
      const base = await rawXaddBaseline(redis, `rawbenchcl${ctx.runId}:`, sc);

      say(`  memgate, ${sc.label}: ${sc.durationS} s measured`);
      const pids = gateways.map((g) => g.pid);
      const cpu0 = await Promise.all(pids.map(cpuSeconds));
      const t0 = performance.now();
      const spec = appendSpec(sc, gateways[0]!.wsUrl, `bench-cluster-${ctx.runId}`, 'caller-');
      const mem = await runWsLoad(
        `memgate cluster ${sc.label}`,
        spec,
        gateways.length,
        gateways.map((g) => g.wsUrl),
      );
      const wallS = (performance.now() - t0) / 1000;
      const cpu1 = await Promise.all(pids.map(cpuSeconds));
      const perGateway = gateways.map((g, i) => {
        const cpuS = cpu0[i] === null || cpu1[i] === null ? null : cpu1[i]! - cpu0[i]!;
        return {
          gateway: i === 0 ? 'A' : 'B',
          pid: g.pid,
          cpuS: cpuS === null ? null : Math.round(cpuS * 100) / 100,
          cpuPctOfCore: cpuS === null ? null : Math.round((cpuS / wallS) * 1000) / 10,
          ...memoryMiB(g.pid),
        };
      });
      details['run'] = { memgate: mem, rawXadd: base, wallS: Math.round(wallS * 10) / 10, perGateway };
      say(`  gateways: ${perGateway.map((g) => `${g.gateway} CPU ${g.cpuPctOfCore ?? '?'} % of a core, RSS ${g.rss ?? '?'} MiB (peak ${g.peak ?? '?'})`).join('; ')}`);

      const bench = `ws append on Redis+NATS, ${sc.label}`;
      const figures: Figure[] = [...latencyFigures(bench, mem.summary, { label: 'raw XADD, ioredis', summary: base }, { p99Ms: below(10, 'p99 < 10 ms') })];
      for (const g of perGateway) {
        figures.push(figure({ bench, metric: `gateway ${g.gateway} CPU (whole run, ramp included)`, value: g.cpuPctOfCore, unit: '% of a core' }));
        figures.push(figure({ bench, metric: `gateway ${g.gateway} RSS at the end`, value: g.rss, unit: 'MiB' }));
        figures.push(figure({ bench, metric: `gateway ${g.gateway} peak RSS`, value: g.peak, unit: 'MiB' }));
      }
      if (mem.timeouts + mem.connectFailures + mem.dropped > 0)
        figures.push(figure({ bench, metric: 'timeouts / connect failures / dropped calls', value: mem.timeouts + mem.connectFailures + mem.dropped, unit: '', note: mem.firstError ?? undefined }));
      return { status: 'ok', figures, details };
    } finally {
      redis?.disconnect();
      await Promise.all(gateways.map((g) => g.stop()));
      for (const s of servers.reverse()) await s.stop();
    }
  },
};
