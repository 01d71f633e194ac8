import autocannon from 'autocannon';
import { Histogram } from '../lib/histogram.ts';
import { startProgress } from '../lib/progress.ts';
import { summarize, type LatencySummary } from '../lib/stats.ts';

/** An autocannon run against one POST route. */
export interface HttpLoadSpec {
  /** http://HOST:PORT */
  url: string;
  path: string;
  connections: number;
  durationS: number;
  /** Body of each request; called per request so a run can rotate through users. */
  body: () => string;
  timeoutS?: number;
  /** Offered load in requests/s across all connections; absent = closed loop (saturation). */
  ratePerS?: number;
}

/** Outcome: our own histogram (autocannon reports no p95), plus autocannon's error counts. */
export interface HttpLoadOutcome {
  summary: LatencySummary;
  non2xx: number;
  timeouts: number;
  /** Autocannon's own p50/p99, as a cross-check of ours. */
  autocannon: { p50Ms: number; p99Ms: number; requestsPerS: number };
}

/**
 * Run autocannon for `durationS` and record every response time in a Histogram
 * (autocannon's per-response event), so p95 is exact to the bucket. Non-2xx
 * responses and timeouts are errors.
 */
export function runHttpLoad(label: string, spec: HttpLoadSpec): Promise<HttpLoadOutcome> {
  const hist = new Histogram();
  let non2xx = 0;
  const progress = startProgress(label, () => `responses=${hist.count} non2xx=${non2xx}`);
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: spec.durationS,
        timeout: spec.timeoutS ?? 10,
        ...(spec.ratePerS !== undefined ? { overallRate: spec.ratePerS } : {}),
        requests: [{ method: 'POST', path: spec.path, headers: { 'content-type': 'application/json' }, setupRequest: (req) => ({ ...req, body: spec.body() }) }],
      },
      (err, result) => {
        if (err) {
          progress.stop('failed');
          reject(err);
          return;
        }
        const errors = non2xx + result.timeouts + result.errors;
        const summary = summarize(hist, errors, result.duration);
        progress.stop(`done: ${summary.count} responses, p50 ${summary.p50Ms} ms, p95 ${summary.p95Ms} ms, ${summary.throughputPerS}/s, errors ${errors}`);
        resolve({ summary, non2xx, timeouts: result.timeouts, autocannon: { p50Ms: result.latency.p50, p99Ms: result.latency.p99, requestsPerS: result.requests.average } });
      },
    );
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTimeMs: number) => {
      if (statusCode >= 200 && statusCode < 300) hist.recordMs(responseTimeMs);
      else non2xx += 1;
    });
  });
}
