import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startMemgate, type MemgateServer } from '../lib/memgate.ts';
import { cpuSeconds } from '../lib/processes.ts';
import { say } from '../lib/progress.ts';
import type { Figure } from '../lib/report-types.ts';
import type { Suite, SuiteOutcome } from '../lib/suite.ts';
import { below, figure } from '../lib/targets.ts';
import { runWsLoad, type WsLoadOutcome } from '../load/ws-load.ts';
import type { WsLoadSpec } from '../load/ws-load-spec.ts';
import { latencyFigures } from './latency-figures.ts';

/** The headline load: 200 calls, 5 turns a second each (1,000 turns/s), a 300-token window. */
const CALLS = 200;
const TOKEN_THRESHOLD = 300;
/** Target: the backlog is back to at most one window per user within this long after the load stops. */
const DRAIN_TARGET_S = 60;

/** One backlog sample (GET /v1/extraction) with the server's CPU and RSS. */
interface Sample {
  /** Seconds since the load started. */
  t: number;
  phase: 'load' | 'drain';
  turns: number;
  tokens: number;
  usersBehind: number;
  maxWindows: number;
  oldestAgeMs: number;
  cpuS: number | null;
  rssMiB: number | null;
}

interface Run {
  load: WsLoadOutcome;
  samples: Sample[];
  /** Seconds from the end of the load until every user was back to at most one window (null: not within the wait). */
  drainS: number | null;
  serverCpuS: number | null;
  peakRssMiB: number | null;
  /** From /metrics at the end: runs committed and the mean of each stage (ms). */
  runs: { committed: number; meanReadMs: number | null; meanPlanMs: number | null; meanCommitMs: number | null };
  /** Turns archived and ACUs indexed (full / lexical vector) and re-embedded, from /metrics: at the load's stop and at the end. */
  memory: { atStop: MemoryCounts | null; atEnd: MemoryCounts | null };
}

interface MemoryCounts {
  turnsArchived: number;
  acusFull: number;
  acusLexical: number;
  acusUpgraded: number;
}

/** The lane runs measured beside the lane-off baseline: the default, the encoder on every ACU (issue 17's old lane), hashing. */
const LANES: ReadonlyArray<{ label: string; env: Record<string, string> }> = [
  { label: 'fused (default: encoder deferred while behind)', env: {} },
  { label: 'fused, encoder on every ACU', env: { MEMGATE_EMBEDDINGS_DEFER_AFTER_MS: '0' } },
  { label: 'hashing', env: { MEMGATE_EMBEDDER: 'offline' } },
];

/**
 * Turn appends while the extraction lane works (embedded default: extraction on its
 * niced thread): ack latency beside the same load on a gateway whose lane is off
 * (MEMGATE_INLINE_WORKERS=false), the backlog every second during and after the load,
 * and how long the lane takes to catch up once the load stops.
 */
export const appendUnderExtractionSuite: Suite = {
  name: 'append-extraction',
  title: `Turn append under extraction: ${CALLS} calls × 5 turns/s, MEMGATE_TOKEN_THRESHOLD=${TOKEN_THRESHOLD} (embedded default)`,
  quick: false,
  async run(ctx): Promise<SuiteOutcome> {
    const durationS = ctx.window(10, 60);
    const drainWaitS = ctx.profile === 'full' ? 180 : 90;
    const figures: Figure[] = [];
    const details: Record<string, unknown> = { calls: CALLS, turnsPerSecondPerCall: 5, tokenThreshold: TOKEN_THRESHOLD, durationS };
    const env = { MEMGATE_TOKEN_THRESHOLD: String(TOKEN_THRESHOLD) };

    say(`  baseline: extraction lane off, ${durationS} s measured`);
    const baseline = await withServer(join(ctx.tmpDir, 'lane-off'), { ...env, MEMGATE_INLINE_WORKERS: 'false' }, (s) => measure(s, spec(s, durationS, `bench-lane-off-${ctx.runId}`), 0));
    details['baseline'] = baseline;
    const lanes: Record<string, Run> = {};
    details['lanes'] = lanes;
    const only = process.env['MEMGATE_BENCH_LANES'];
    for (const [i, variant] of LANES.entries()) {
      if (only && !only.split(',').some((l) => variant.label.startsWith(l))) continue;
      say(`  extraction lane on, ${variant.label}: ${durationS} s measured, then up to ${drainWaitS} s for the backlog to drain`);
      const lane = await withServer(join(ctx.tmpDir, `lane-on-${i}`), { ...env, ...variant.env }, (s) => measure(s, spec(s, durationS, `bench-lane-on-${i}-${ctx.runId}`), drainWaitS));
      lanes[variant.label] = lane;
      figures.push(...laneFigures(`ws append, ${CALLS} calls × 5 turns/s, extraction lane working, ${variant.label}`, lane, baseline));
    }
    return { status: 'ok', figures, details };
  },
};

function laneFigures(bench: string, lane: Run, baseline: Run): Figure[] {
  const figures: Figure[] = [];
  const p99Limit = baseline.load.summary.p99Ms === null ? null : 2 * baseline.load.summary.p99Ms;
  figures.push(...latencyFigures(bench, lane.load.summary, { label: 'lane off', summary: baseline.load.summary }, p99Limit === null ? {} : { p99Ms: below(p99Limit, 'p99 ≤ 2× lane off') }));
  figures.push(figure({ bench, metric: 'server CPU', value: lane.serverCpuS, unit: 's', baseline: { label: 'lane off', value: baseline.serverCpuS } }));
  figures.push(figure({ bench, metric: 'peak RSS', value: lane.peakRssMiB, unit: 'MiB', baseline: { label: 'lane off', value: baseline.peakRssMiB } }));
  const atStop = lane.samples.filter((s) => s.phase === 'load').at(-1);
  figures.push(
    figure({
      bench,
      metric: 'backlog at load stop',
      value: atStop?.tokens ?? null,
      unit: 'tokens',
      note: atStop ? `${atStop.turns} turns, ${atStop.usersBehind} users behind, worst ${atStop.maxWindows} windows` : 'no sample',
    }),
  );
  const r = lane.runs;
  figures.push(
    figure({ bench, metric: 'runs committed', value: r.committed, unit: '', note: `mean stage ms: read ${r.meanReadMs ?? '–'}, plan ${r.meanPlanMs ?? '–'}, commit ${r.meanCommitMs ?? '–'}` }),
  );
  figures.push(
    figure({ bench, metric: 'backlog drained to ≤ 1 window/user', value: lane.drainS, unit: 's after load stop', target: below(DRAIN_TARGET_S, `≤ ${DRAIN_TARGET_S} s after the load stops`) }),
  );
  const { atStop: m0, atEnd: m1 } = lane.memory;
  const acus = (m: MemoryCounts | null) => (m ? `${m.acusFull} full + ${m.acusLexical} lexical ACUs, ${m.acusUpgraded} re-embedded` : 'no sample');
  figures.push(figure({ bench, metric: 'turns archived at load stop', value: m0?.turnsArchived ?? null, unit: 'turns', note: `of ${lane.load.summary.count} acked; ${acus(m0)}` }));
  figures.push(figure({ bench, metric: 'turns archived at the end', value: m1?.turnsArchived ?? null, unit: 'turns', note: acus(m1) }));
  return figures;
}

function spec(server: MemgateServer, durationS: number, agentId: string): WsLoadSpec {
  return {
    url: server.wsUrl,
    connections: CALLS,
    mode: 'cadence',
    op: 'append',
    // 5 turns a second per call, phases spread by the random gap.
    cadenceMs: [150, 250],
    inFlight: 1,
    rampPerS: 200,
    warmupS: 3,
    durationS,
    timeoutMs: 10_000,
    agentId,
    userPrefix: 'u-',
    userOffset: 0,
    startUsers: 0,
  };
}

async function withServer<T>(dir: string, env: Record<string, string>, fn: (s: MemgateServer) => Promise<T>): Promise<T> {
  const server = await startMemgate(dir, { env });
  try {
    return await fn(server);
  } finally {
    await server.stop();
  }
}

/** Run the load while sampling every second; then keep sampling until the backlog is down to one window per user (or `drainWaitS`). */
async function measure(server: MemgateServer, load: WsLoadSpec, drainWaitS: number): Promise<Run> {
  const samples: Sample[] = [];
  const cpu0 = await cpuSeconds(server.pid);
  const t0 = performance.now();
  let phase: Sample['phase'] = 'load';
  const sampleOnce = async () => samples.push(await sample(server, (performance.now() - t0) / 1000, phase, cpu0));
  const timer = setInterval(() => void sampleOnce().catch(() => undefined), 1000);
  let outcome: WsLoadOutcome;
  try {
    outcome = await runWsLoad(`memgate ${load.agentId}`, load);
  } finally {
    clearInterval(timer);
  }
  const atStop = await memoryCounts(server).catch(() => null);
  phase = 'drain';
  const stoppedAt = performance.now();
  let drainS: number | null = null;
  for (;;) {
    await sampleOnce().catch(() => undefined);
    const last = samples.at(-1);
    if (last && last.phase === 'drain' && last.maxWindows <= 1) {
      drainS = Math.round((performance.now() - stoppedAt) / 100) / 10;
      break;
    }
    if ((performance.now() - stoppedAt) / 1000 >= drainWaitS) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const cpu1 = await cpuSeconds(server.pid);
  const runs = await runStages(server);
  const atEnd = await memoryCounts(server).catch(() => null);
  const rss = samples.map((s) => s.rssMiB).filter((v): v is number => v !== null);
  return {
    load: outcome,
    samples,
    drainS,
    serverCpuS: cpu0 === null || cpu1 === null ? null : Math.round((cpu1 - cpu0) * 100) / 100,
    peakRssMiB: rss.length > 0 ? Math.max(...rss) : null,
    runs,
    memory: { atStop, atEnd },
  };
}

async function memoryCounts(server: MemgateServer): Promise<MemoryCounts> {
  const text = await (await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    turnsArchived: value('memgate_turns_archived_total'),
    acusFull: value('memgate_acus_indexed_total{vector="full"}'),
    acusLexical: value('memgate_acus_indexed_total{vector="lexical"}'),
    acusUpgraded: value('memgate_acus_upgraded_total'),
  };
}

/** Committed runs and mean stage times, from the server's /metrics histograms. */
async function runStages(server: MemgateServer): Promise<Run['runs']> {
  const text = await (await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  const mean = (stage: string) => {
    const count = value(`memgate_extraction_${stage}_duration_seconds_count`);
    return count > 0 ? Math.round((value(`memgate_extraction_${stage}_duration_seconds_sum`) / count) * 1e4) / 10 : null;
  };
  return { committed: value('memgate_extraction_duration_seconds_count') || 0, meanReadMs: mean('read'), meanPlanMs: mean('plan'), meanCommitMs: mean('commit') };
}

async function sample(server: MemgateServer, t: number, phase: Sample['phase'], cpu0: number | null): Promise<Sample> {
  const res = await fetch(`${server.url}/v1/extraction?minutes=1`, { signal: AbortSignal.timeout(5_000) });
  const body = (await res.json()) as { backlog: { turns: number; tokens: number; usersBehind: number; maxWindows: number; oldestAgeMs: number } };
  const b = body.backlog;
  const cpu = await cpuSeconds(server.pid);
  return {
    t: Math.round(t * 10) / 10,
    phase,
    turns: b.turns,
    tokens: b.tokens,
    usersBehind: b.usersBehind,
    maxWindows: b.maxWindows,
    oldestAgeMs: b.oldestAgeMs,
    cpuS: cpu === null || cpu0 === null ? null : Math.round((cpu - cpu0) * 100) / 100,
    rssMiB: await rssMiB(server.pid),
  };
}

/** Resident set size of a process from /proc, in MiB; null off Linux. */
async function rssMiB(pid: number): Promise<number | null> {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 102.4) / 10 : null;
  } catch {
    return null;
  }
}
