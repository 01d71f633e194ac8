import { join } from 'node:path';
import WebSocket from 'ws';
import { startMemgate, type MemgateServer } from '../lib/memgate.ts';
import { say } from '../lib/progress.ts';
import type { Figure } from '../lib/report-types.ts';
import type { BenchContext, Suite, SuiteOutcome } from '../lib/suite.ts';
import { figure } from '../lib/targets.ts';
import { appendSpec, measured, type AppendScenario, type Measured } from './append.ts';

/** What the dashboard's event stream saw over one run. */
interface StreamTally {
  events: number;
  droppedNotices: number;
  droppedEvents: number;
  /** seq jumps not covered by a dropped notice (must be 0). */
  silentGaps: number;
}

/**
 * A dashboard's live connection, as the page opens it: one WebSocket subscribed to
 * the tenant's `events` topic, reading every event and checking its seq; the page's
 * one-off state read (`GET /v1/calls`) when it connects.
 */
async function openDashboard(server: MemgateServer): Promise<{ tally: StreamTally; close: () => Promise<void> }> {
  const tally: StreamTally = { events: 0, droppedNotices: 0, droppedEvents: 0, silentGaps: 0 };
  const ws = new WebSocket(server.wsUrl, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let last = 0;
  const subscribed = new Promise<void>((resolve) => {
    ws.on('message', (data) => {
      const f = JSON.parse(data.toString()) as Record<string, unknown>;
      if (f['op'] === 'subscribed') resolve();
      else if (f['op'] === 'event') {
        tally.events++;
        const seq = f['seq'] as number;
        if (seq !== last + 1) tally.silentGaps++;
        last = seq;
      } else if (f['op'] === 'dropped') {
        tally.droppedNotices++;
        tally.droppedEvents += f['count'] as number;
        last = f['toSeq'] as number;
      }
    });
  });
  ws.send(JSON.stringify({ op: 'subscribe', id: 1, topics: ['events'] }));
  await subscribed;
  await (await fetch(`${server.url}/v1/calls`)).arrayBuffer();
  return {
    tally,
    close: () =>
      new Promise<void>((resolve) => {
        ws.once('close', () => resolve());
        ws.close();
      }),
  };
}

/**
 * What a live dashboard costs the gateway: the 1,000-call voice-cadence append load
 * run three times back to back on one gateway (without, with a dashboard subscribed
 * to the tenant's events, without again), comparing gateway CPU and ack latency.
 * The gateway runs without inline workers so extraction runs do not blur the
 * comparison; the dashboard's connection lives in the bench process, not the gateway's.
 */
export const dashboardSuite: Suite = {
  name: 'dashboard',
  title: 'Live dashboard subscribed vs not: gateway CPU and ack latency (1,000 calls)',
  quick: false,
  async run(ctx: BenchContext): Promise<SuiteOutcome> {
    const sc: AppendScenario = { label: '1,000 calls, voice cadence', connections: 1000, mode: 'cadence', inFlight: 1, durationS: ctx.window(20, 60) };
    const sat: AppendScenario = { label: 'saturation, 100 calls × 4 in flight', connections: 100, mode: 'saturation', inFlight: 4, durationS: ctx.window(8, 20) };
    const server = await startMemgate(join(ctx.tmpDir, 'dashboard'), { env: { MEMGATE_INLINE_WORKERS: 'false' } });
    const figures: Figure[] = [];
    const details: Record<string, unknown> = { gateway: 'embedded default, no inline workers', dashboard: 'one WebSocket subscribed to `events` (every event of the tenant), seq checked' };
    try {
      const runs: Record<string, Measured & { wallS: number; stream?: StreamTally }> = {};
      const one = async (key: string, s: AppendScenario, withDashboard: boolean) => {
        say(`  ${s.label}, ${withDashboard ? 'dashboard subscribed' : 'no dashboard'}: ${s.durationS} s measured`);
        const dash = withDashboard ? await openDashboard(server) : null;
        try {
          const t0 = performance.now();
          const m0 = await measured(`${s.label} ${withDashboard ? '+ dashboard' : ''}`, appendSpec(s, server.wsUrl, `bench-dash-${ctx.runId}`, `${key}-`), server.pid);
          const m = { ...m0, wallS: Math.round((performance.now() - t0) / 10) / 100 };
          runs[key] = dash ? { ...m, stream: { ...dash.tally } } : m;
        } finally {
          await dash?.close();
        }
      };
      // Interleaved rounds (ABBA order), so drift and other load on the machine hit both sides alike.
      const rounds = 3;
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? [false, true] : [true, false];
        for (const w of order) await one(`cadence-${w ? 'with' : 'without'}-${r + 1}`, sc, w);
      }
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? [false, true] : [true, false];
        for (const w of order) await one(`saturation-${w ? 'with' : 'without'}-${r + 1}`, sat, w);
      }
      const pick = (prefix: string) =>
        Object.entries(runs)
          .filter(([k]) => k.startsWith(prefix))
          .map(([, v]) => v);
      const median = (xs: Array<number | null>) => {
        const v = xs.filter((x): x is number => x !== null).sort((x, y) => x - y);
        if (v.length === 0) return null;
        return v.length % 2 ? v[(v.length - 1) / 2]! : Math.round(((v[v.length / 2 - 1]! + v[v.length / 2]!) / 2) * 1000) / 1000;
      };
      // Gateway CPU over the whole run (ramp, warm-up, measured window) per second of it.
      const cpuPct = (m: Measured & { wallS: number }) => (m.serverCpuS === null ? null : Math.round((m.serverCpuS / m.wallS) * 1000) / 10);
      const all = (xs: Array<number | null>) => xs.map((x) => (x === null ? '–' : String(x))).join(', ');
      for (const [mode, label] of [
        ['cadence', sc.label],
        ['saturation', sat.label],
      ] as const) {
        const wo = pick(`${mode}-without-`);
        const wi = pick(`${mode}-with-`);
        const bench = `ws append, ${label}, dashboard subscribed (median of ${rounds} interleaved runs)`;
        const base = 'no dashboard (same gateway, interleaved)';
        const row = (metric: string, unit: string, f: (m: Measured & { wallS: number }) => number | null) =>
          figure({ bench, metric, value: median(wi.map(f)), unit, baseline: { label: base, value: median(wo.map(f)) }, note: `with: ${all(wi.map(f))}; without: ${all(wo.map(f))}` });
        figures.push(row('ack p50', 'ms', (m) => m.summary.p50Ms));
        figures.push(row('ack p99', 'ms', (m) => m.summary.p99Ms));
        figures.push(row('gateway CPU, % of one core', '%', cpuPct));
        if (mode === 'saturation') {
          figures.push(row('throughput', '/s', (m) => m.summary.throughputPerS));
          figures.push(row('gateway CPU per request', 'µs', (m) => m.cpuUsPerReply));
        }
        const events = wi.reduce((n, m) => n + (m.stream?.events ?? 0), 0);
        const dropped = wi.reduce((n, m) => n + (m.stream?.droppedEvents ?? 0), 0);
        const silent = wi.reduce((n, m) => n + (m.stream?.silentGaps ?? 0), 0);
        figures.push(figure({ bench, metric: 'events to the dashboard: delivered / dropped (announced) / silent gaps', value: events, unit: '', note: `dropped ${dropped}, silent gaps ${silent}` }));
      }
      details['runs'] = runs;
      return { status: 'ok', figures, details };
    } finally {
      await server.stop();
    }
  },
};
