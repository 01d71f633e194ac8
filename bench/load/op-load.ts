import { Histogram } from '../lib/histogram.ts';
import { startProgress } from '../lib/progress.ts';
import { summarize, type LatencySummary } from '../lib/stats.ts';
import { prng } from './turn-text.ts';

/** The load shape of an in-process async operation (same vocabulary as WsLoadSpec). */
export interface OpLoadSpec {
  calls: number;
  mode: 'cadence' | 'saturation';
  cadenceMs: [number, number];
  inFlight: number;
  warmupS: number;
  durationS: number;
}

/**
 * Drive `op(call)` the way the WebSocket generator drives a server: `calls`
 * concurrent callers, each either at voice cadence or closed loop with
 * `inFlight` outstanding. Used for the raw Redis baselines, which need no
 * gateway in between.
 */
export async function runOpLoad(label: string, spec: OpLoadSpec, op: (call: number) => Promise<unknown>): Promise<LatencySummary> {
  const hist = new Histogram();
  let errors = 0;
  let measuring = false;
  let stopping = false;
  const progress = startProgress(label, () => `${measuring ? 'measuring' : 'warming'} ops=${hist.count} errors=${errors}`);
  const inflight = new Set<Promise<void>>();
  const fire = (call: number) => {
    const counted = measuring;
    const t0 = performance.now();
    const p = op(call).then(
      () => {
        if (counted) hist.recordMs(performance.now() - t0);
      },
      () => {
        if (counted) errors += 1;
      },
    );
    const tracked = p.then(() => {
      inflight.delete(tracked);
      if (spec.mode === 'saturation' && !stopping) fire(call);
    });
    inflight.add(tracked);
  };
  const timers: NodeJS.Timeout[] = [];
  for (let c = 0; c < spec.calls; c++) {
    if (spec.mode === 'saturation') for (let i = 0; i < spec.inFlight; i++) fire(c);
    else {
      const rnd = prng(c + 99);
      const tick = () => {
        if (stopping) return;
        fire(c);
        timers[c] = setTimeout(tick, spec.cadenceMs[0] + rnd() * (spec.cadenceMs[1] - spec.cadenceMs[0]));
      };
      timers[c] = setTimeout(tick, rnd() * spec.cadenceMs[0]);
    }
  }
  await sleep(spec.warmupS * 1000);
  measuring = true;
  const t0 = performance.now();
  await sleep(spec.durationS * 1000);
  measuring = false;
  const measuredS = (performance.now() - t0) / 1000;
  stopping = true;
  for (const t of timers) clearTimeout(t);
  await Promise.all([...inflight]);
  const summary = summarize(hist, errors, measuredS);
  progress.stop(`done: ${summary.count} ops, p50 ${summary.p50Ms} ms, p99 ${summary.p99Ms} ms, ${summary.throughputPerS}/s`);
  return summary;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
