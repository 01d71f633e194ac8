import { Agent, request } from 'node:http';
import type { LatencySummary } from '../lib/stats.ts';
import { runOpLoad } from './op-load.ts';

/**
 * A smooth open-loop HTTP load: `ratePerS` POSTs per second spread evenly over
 * `calls` keep-alive callers (each on its own cadence with ±20 % jitter), the
 * way session starts actually arrive. autocannon's `overallRate` is not used for
 * this because it sends each second's quota in one burst at the top of the second,
 * which measures queueing behind the burst rather than the route.
 */
export async function runPacedHttp(
  label: string,
  opts: { url: string; path: string; ratePerS: number; calls: number; warmupS: number; durationS: number; body: () => string },
): Promise<LatencySummary> {
  const agent = new Agent({ keepAlive: true, maxSockets: opts.calls });
  const target = new URL(opts.path, opts.url);
  const meanGapMs = (opts.calls / opts.ratePerS) * 1000;
  try {
    return await runOpLoad(label, { calls: opts.calls, mode: 'cadence', cadenceMs: [meanGapMs * 0.8, meanGapMs * 1.2], inFlight: 1, warmupS: opts.warmupS, durationS: opts.durationS }, () =>
      post(agent, target, opts.body()),
    );
  } finally {
    agent.destroy();
  }
}

function post(agent: Agent, url: URL, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => (res.statusCode !== undefined && res.statusCode < 300 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}
