import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Histogram } from '../lib/histogram.ts';
import { ownChild } from '../lib/processes.ts';
import { startProgress } from '../lib/progress.ts';
import { summarize, type LatencySummary } from '../lib/stats.ts';
import type { WsLoadMessage, WsLoadResult, WsLoadSpec } from './ws-load-spec.ts';

const CHILD = fileURLToPath(new URL('./ws-load-child.ts', import.meta.url));

/** Merged outcome of a WebSocket load run. */
export interface WsLoadOutcome {
  summary: LatencySummary;
  sent: number;
  /** Replies over the whole run, warm-up included. */
  totalReplies: number;
  timeouts: number;
  errorReplies: number;
  connectFailures: number;
  dropped: number;
  firstError: string | null;
  processes: number;
}

/**
 * Run `spec` from `processes` forked generator processes (the connections are split
 * between them), show progress, and merge their histograms. A generator that crashes
 * rejects the run; a generator that hangs is killed after the run's deadline. With
 * several `urls` (gateways of one cluster), generator i drives `urls[i % urls.length]`.
 */
export async function runWsLoad(label: string, spec: WsLoadSpec, processes = 1, urls: readonly string[] = [spec.url]): Promise<WsLoadOutcome> {
  const n = Math.max(1, Math.min(processes, spec.connections));
  const live = new Map<number, { open: number; sent: number; replies: number; errors: number; measuring: boolean }>();
  const progress = startProgress(label, () => {
    let open = 0,
      sent = 0,
      replies = 0,
      errors = 0,
      measuring = false;
    for (const p of live.values()) {
      open += p.open;
      sent += p.sent;
      replies += p.replies;
      errors += p.errors;
      measuring ||= p.measuring;
    }
    return `${measuring ? 'measuring' : 'ramping'} calls=${open}/${spec.connections} sent=${sent} replies=${replies} errors=${errors}`;
  });
  const share = Math.floor(spec.connections / n);
  const deadlineMs = (spec.connections / spec.rampPerS + spec.warmupS + spec.durationS) * 1000 + spec.timeoutMs + 60_000;
  try {
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => {
        const connections = i === n - 1 ? spec.connections - share * (n - 1) : share;
        const part: WsLoadSpec = { ...spec, url: urls[i % urls.length]!, connections, rampPerS: spec.rampPerS / n, userOffset: spec.userOffset + i * share };
        return runChild(part, deadlineMs, (m) => live.set(i, m));
      }),
    );
    const hist = new Histogram();
    let errors = 0,
      sent = 0,
      totalReplies = 0,
      timeouts = 0,
      errorReplies = 0,
      connectFailures = 0,
      dropped = 0,
      measuredS = 0;
    let firstError: string | null = null;
    for (const r of results) {
      hist.merge(r.hist);
      errors += r.errors;
      sent += r.sent;
      totalReplies += r.totalReplies;
      timeouts += r.timeouts;
      errorReplies += r.errorReplies;
      connectFailures += r.connectFailures;
      dropped += r.dropped;
      measuredS = Math.max(measuredS, r.measuredS);
      firstError ??= r.firstError;
    }
    const summary = summarize(hist, errors, measuredS);
    progress.stop(`done: ${summary.count} replies, p50 ${summary.p50Ms} ms, p99 ${summary.p99Ms} ms, ${summary.throughputPerS}/s, errors ${errors}`);
    return { summary, sent, totalReplies, timeouts, errorReplies, connectFailures, dropped, firstError, processes: n };
  } catch (err) {
    progress.stop('failed');
    throw err;
  }
}

function runChild(spec: WsLoadSpec, deadlineMs: number, onProgress: (m: Extract<WsLoadMessage, { type: 'progress' }>) => void): Promise<WsLoadResult> {
  return new Promise((resolve, reject) => {
    const child = ownChild(fork(CHILD, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    let settled = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      if (!settled) reject(new Error(`load generator did not finish within ${Math.round(deadlineMs / 1000)} s`));
      settled = true;
    }, deadlineMs);
    child.on('message', (m: WsLoadMessage) => {
      if (m.type === 'progress') onProgress(m);
      else if (m.type === 'result' && !settled) {
        settled = true;
        clearTimeout(timer);
        resolve(m.result);
      } else if (m.type === 'failed' && !settled) {
        settled = true;
        clearTimeout(timer);
        reject(new Error(`load generator failed: ${m.message}`));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (!settled) {
        settled = true;
        reject(new Error(`load generator exited with code ${code} before reporting`));
      }
    });
    child.send(spec);
  });
}
