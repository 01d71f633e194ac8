import { join } from 'node:path';
import { startMemgate, type MemgateServer } from '../lib/memgate.ts';
import { say } from '../lib/progress.ts';
import type { Figure } from '../lib/report-types.ts';
import { summarizeMs, type LatencySummary } from '../lib/stats.ts';
import type { BenchContext, Suite, SuiteOutcome } from '../lib/suite.ts';
import { syntheticQuery } from '../load/synthetic-facts.ts';
import { latencyFigures } from './latency-figures.ts';
import { appendSpec, measured, type AppendScenario, type Measured } from './append.ts';

/** Searches per second sent beside the appends, and how many may wait at once. */
const SEARCH_RATE_PER_S = 10;
const SEARCH_MAX_IN_FLIGHT = 4;

/** Searches sent over HTTP at a fixed rate until stopped; their latencies as the client saw them. */
function searchLoad(url: string, agentId: string, users: number): { stop(): Promise<LatencySummary> } {
  const samples: number[] = [];
  let errors = 0;
  let inFlight = 0;
  let i = 0;
  const started = performance.now();
  const pending = new Set<Promise<void>>();
  const timer = setInterval(() => {
    if (inFlight >= SEARCH_MAX_IN_FLIGHT) return;
    inFlight++;
    const n = i++;
    const t0 = performance.now();
    const body = JSON.stringify({ agentId, userId: `stall-${n % users}`, query: syntheticQuery(n), k: 5 });
    const p = fetch(`${url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(10_000) })
      .then(async (res) => {
        await res.arrayBuffer();
        if (res.ok) samples.push(performance.now() - t0);
        else errors++;
      })
      .catch(() => void errors++)
      .finally(() => {
        inFlight--;
        pending.delete(p);
      });
    pending.add(p);
  }, 1000 / SEARCH_RATE_PER_S);
  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      return summarizeMs(samples, errors, (performance.now() - started) / 1000);
    },
  };
}

/** One server variant: its append acks with and without searches beside them. */
interface Variant {
  label: string;
  modelThread: boolean;
}

/**
 * What a fused query embedding costs the gateway's other clients: WebSocket append ack
 * latency at voice cadence while `memory_search` runs beside it (10/s over HTTP), with
 * the USE-lite model on the gateway's event loop vs on the embed thread, each in its own
 * server, in the same run. Extraction is off (MEMGATE_INLINE_WORKERS=false) so the only
 * model work is the queries'; the searched users have no ACUs, which does not change the
 * embedding a search does first.
 */
export const embedderStallSuite: Suite = {
  name: 'embedder-stall',
  title: 'Append acks while fused searches run: model on the event loop vs on the embed thread',
  quick: false,
  async run(ctx: BenchContext): Promise<SuiteOutcome> {
    const sc: AppendScenario = { label: '500 calls, voice cadence', connections: 500, mode: 'cadence', inFlight: 1, durationS: ctx.window(15, 60) };
    const variants: Variant[] = [
      { label: 'model on the event loop', modelThread: false },
      { label: 'model on the embed thread', modelThread: true },
    ];
    const figures: Figure[] = [];
    const details: Record<string, unknown> = { scenario: sc, searchRatePerS: SEARCH_RATE_PER_S, searchMaxInFlight: SEARCH_MAX_IN_FLIGHT, embedder: 'fused', variants: [] };
    let quiet: Measured | null = null;
    for (const v of variants) {
      const server: MemgateServer = await startMemgate(join(ctx.tmpDir, `stall-${v.modelThread ? 'thread' : 'loop'}`), {
        env: { MEMGATE_EMBEDDER: 'fused', MEMGATE_EMBEDDINGS_MODEL_THREAD: String(v.modelThread), MEMGATE_INLINE_WORKERS: 'false' },
      });
      try {
        const agentId = `bench-stall-${ctx.runId}`;
        // The first search loads the model (1-3 s): not part of any window.
        await fetch(`${server.url}/v1/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agentId, userId: 'stall-0', query: 'warm up' }) });
        if (!quiet) {
          say(`  ${sc.label}, no searches (${v.label}): ${sc.durationS} s measured`);
          quiet = await measured(`memgate ${sc.label}, no searches`, appendSpec(sc, server.wsUrl, agentId, 'quiet-'), server.pid);
          details['noSearches'] = quiet;
        }
        say(`  ${sc.label}, ${SEARCH_RATE_PER_S} fused searches/s beside, ${v.label}: ${sc.durationS} s measured`);
        const searches = searchLoad(server.url, agentId, 50);
        const appends = await measured(`memgate ${sc.label}, searches, ${v.label}`, appendSpec(sc, server.wsUrl, agentId, `${v.modelThread ? 'th' : 'ev'}-`), server.pid);
        const search = await searches.stop();
        say(`  ${v.label}: append p50 ${appends.summary.p50Ms} ms, p99 ${appends.summary.p99Ms} ms; search p50 ${search.p50Ms} ms, p95 ${search.p95Ms} ms`);
        figures.push(...latencyFigures(`ws append beside fused searches, ${v.label}`, appends.summary, { label: 'no searches', summary: quiet.summary }));
        figures.push(...latencyFigures(`memory_search (fused) beside appends, ${v.label}`, search, null).filter((f) => f.metric !== 'throughput'));
        (details['variants'] as unknown[]).push({ variant: v, appends, search });
      } finally {
        await server.stop();
      }
    }
    return { status: 'ok', figures, details };
  },
};
