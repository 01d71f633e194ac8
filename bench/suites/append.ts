import { join } from 'node:path';
import { measureSqliteAppendCeiling } from '../baselines/sqlite-append.ts';
import { startEcho, startMemgate } from '../lib/memgate.ts';
import { cpuSeconds } from '../lib/processes.ts';
import { say } from '../lib/progress.ts';
import type { Figure } from '../lib/report-types.ts';
import type { LatencySummary } from '../lib/stats.ts';
import type { BenchContext, Suite, SuiteOutcome } from '../lib/suite.ts';
import { below, figure } from '../lib/targets.ts';
import { runWsLoad, type WsLoadOutcome } from '../load/ws-load.ts';
import type { WsLoadSpec } from '../load/ws-load-spec.ts';
import { latencyFigures } from './latency-figures.ts';

/** One load shape, run against the echo and then against memgate. */
export interface AppendScenario {
  label: string;
  connections: number;
  mode: 'cadence' | 'saturation';
  inFlight: number;
  durationS: number;
  /** p99 target (ms) when docs/design.md sets one for this shape. */
  p99TargetMs?: number;
}

/** The scenarios of a profile: 100 and 1,000 calls (and 5,000 in --full) at voice cadence, then saturation. */
export function appendScenarios(ctx: BenchContext): AppendScenario[] {
  const s: AppendScenario[] = [
    { label: '100 calls, voice cadence', connections: 100, mode: 'cadence', inFlight: 1, durationS: ctx.window(10, 30) },
    { label: '1,000 calls, voice cadence', connections: 1000, mode: 'cadence', inFlight: 1, durationS: ctx.window(15, 60), p99TargetMs: 10 },
  ];
  if (ctx.profile === 'full') s.push({ label: '5,000 calls, voice cadence', connections: 5000, mode: 'cadence', inFlight: 1, durationS: ctx.window(15, 60), p99TargetMs: 10 });
  s.push({ label: 'saturation, 100 calls × 4 in flight', connections: 100, mode: 'saturation', inFlight: 4, durationS: ctx.window(8, 20) });
  return s;
}

/** The WsLoadSpec of a scenario against `url`. */
export function appendSpec(sc: AppendScenario, url: string, agentId: string, userPrefix: string): WsLoadSpec {
  return {
    url,
    connections: sc.connections,
    mode: sc.mode,
    op: 'append',
    cadenceMs: [3000, 7000],
    inFlight: sc.inFlight,
    rampPerS: 1000,
    warmupS: sc.mode === 'cadence' ? 4 : 2,
    durationS: sc.durationS,
    timeoutMs: 10_000,
    agentId,
    userPrefix,
    userOffset: 0,
    startUsers: 0,
  };
}

/** Run one scenario against a server, also measuring the server's CPU use over the run. */
export async function measured(label: string, spec: WsLoadSpec, pid: number): Promise<Measured> {
  const c0 = await cpuSeconds(pid);
  const out = await runWsLoad(label, spec);
  const c1 = await cpuSeconds(pid);
  const serverCpuS = c0 === null || c1 === null ? null : Math.round((c1 - c0) * 100) / 100;
  return { ...out, serverCpuS, cpuUsPerReply: serverCpuS === null || out.totalReplies === 0 ? null : Math.round((serverCpuS * 1e6) / out.totalReplies) };
}

/** A WebSocket load outcome with the server's CPU use over the run. */
export interface Measured extends WsLoadOutcome {
  serverCpuS: number | null;
  /** Server CPU microseconds per reply: far less sensitive to other load on the machine than latency. */
  cpuUsPerReply: number | null;
}

/** The "server CPU per request" figure of a row, beside the baseline server's. */
export function cpuFigure(bench: string, subject: Measured, baseline: Measured, label: string): Figure {
  return figure({ bench, metric: 'server CPU per request', value: subject.cpuUsPerReply, unit: 'µs', baseline: { label, value: baseline.cpuUsPerReply } });
}

/**
 * Turn append over the WebSocket: memgate (embedded default, its own process) and
 * the raw uWS echo, each driven by the same generator process, scenario by scenario.
 */
export const appendSuite: Suite = {
  name: 'append',
  title: 'Turn append over the WebSocket (embedded default)',
  quick: true,
  async run(ctx): Promise<SuiteOutcome> {
    const echo = await startEcho();
    const memgate = await startMemgate(join(ctx.tmpDir, 'append'));
    const figures: Figure[] = [];
    const details: Record<string, unknown> = { generator: 'ws@8 JSON text frames, 1 forked process, 127.0.0.1', scenarios: [] };
    try {
      let ceiling: LatencySummary | null = null;
      for (const sc of appendScenarios(ctx)) {
        if (sc.mode === 'saturation' && ceiling === null) {
          // Measured right before the saturation runs, so both see the same machine.
          say('  durable-write ceiling: SqliteTurnBuffer.append in a loop');
          ceiling = measureSqliteAppendCeiling(join(ctx.tmpDir, 'append'), ctx.profile === 'full' ? 100_000 : 50_000);
          details['sqliteAppendCeiling'] = ceiling;
        }
        say(`  ${sc.label}: ${sc.durationS} s measured`);
        const base = await measured(`echo ${sc.label}`, appendSpec(sc, echo.wsUrl, 'bench', `echo-${ctx.runId}-`), echo.pid);
        const mem = await measured(`memgate ${sc.label}`, appendSpec(sc, memgate.wsUrl, `bench-append-${ctx.runId}`, `u-${sc.connections}-${sc.mode}-`), memgate.pid);
        const bench = `ws append, ${sc.label}${sc.mode === 'saturation' ? ', inline workers (npm start default)' : ''}`;
        figures.push(...latencyFigures(bench, mem.summary, { label: 'uWS echo', summary: base.summary }, sc.p99TargetMs ? { p99Ms: below(sc.p99TargetMs, `p99 < ${sc.p99TargetMs} ms`) } : {}));
        // CPU per request only means something under saturation; at voice cadence fixed costs dominate it.
        if (sc.mode === 'saturation') figures.push(cpuFigure(bench, mem, base, 'uWS echo'));
        (details['scenarios'] as unknown[]).push({ scenario: sc, memgate: mem, echo: base });
      }
      // The embedded default runs extraction workers inside the gateway: under saturation they
      // compete with appends for the event loop. The same load on a gateway without inline
      // workers isolates the append path itself (the durable write and the protocol).
      const sat = appendScenarios(ctx).find((s) => s.mode === 'saturation')!;
      const satEcho = (details['scenarios'] as Array<{ scenario: AppendScenario; echo: Measured }>).find((s) => s.scenario.mode === 'saturation')!.echo;
      const gatewayOnly = await startMemgate(join(ctx.tmpDir, 'append-gateway-only'), { env: { MEMGATE_INLINE_WORKERS: 'false' } });
      try {
        say(`  ${sat.label}, gateway only (no inline workers): ${sat.durationS} s measured`);
        const mem = await measured(`memgate gateway only ${sat.label}`, appendSpec(sat, gatewayOnly.wsUrl, `bench-append-${ctx.runId}`, 'gw-only-'), gatewayOnly.pid);
        const bench = `ws append, ${sat.label}, gateway only (no inline workers)`;
        figures.push(...latencyFigures(bench, mem.summary, { label: 'uWS echo', summary: satEcho.summary }));
        figures.push(cpuFigure(bench, mem, satEcho, 'uWS echo'));
        details['saturationGatewayOnly'] = mem;
      } finally {
        await gatewayOnly.stop();
      }
      const satMem = (details['scenarios'] as Array<{ scenario: AppendScenario; memgate: WsLoadOutcome }>).find((s) => s.scenario.mode === 'saturation');
      const ceilingBase = { label: 'SqliteTurnBuffer.append loop, in-process', value: ceiling?.throughputPerS ?? null };
      if (satMem)
        figures.push(
          figure({ bench: 'ws append, saturation (embedded default)', metric: 'throughput vs durable-write ceiling', value: satMem.memgate.summary.throughputPerS, unit: '/s', baseline: ceilingBase }),
        );
      const gw = details['saturationGatewayOnly'] as WsLoadOutcome;
      figures.push(figure({ bench: 'ws append, saturation, gateway only', metric: 'throughput vs durable-write ceiling', value: gw.summary.throughputPerS, unit: '/s', baseline: ceilingBase }));
      return { status: 'ok', figures, details };
    } finally {
      await Promise.all([echo.stop(), memgate.stop()]);
    }
  },
};
