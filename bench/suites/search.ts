import { join } from 'node:path';
import { defaultConfig } from '../../src/config/config-schema.ts';
import { iso } from '../../src/core/clock.ts';
import { stableHash, stableUuid } from '../../src/core/ids.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { Acu, Scope } from '../../src/core/types.ts';
import { createRuntime, type Runtime } from '../../src/app/wiring.ts';
import { syntheticFact, syntheticQuery } from '../load/synthetic-facts.ts';
import { startProgress, say } from '../lib/progress.ts';
import type { Figure } from '../lib/report-types.ts';
import { summarizeMs, type LatencySummary } from '../lib/stats.ts';
import type { Suite, SuiteOutcome } from '../lib/suite.ts';
import { below, figure } from '../lib/targets.ts';
import { latencyFigures } from './latency-figures.ts';
import { DEV_TENANT } from './start.ts';

/** The synthetic ACUs `start`, `start + 1`, ... of `scope`, one per vector (the i-th fact's text and date). */
export function syntheticAcus(scope: Scope, start: number, vectors: readonly Float32Array[], createdAt: string): Acu[] {
  return vectors.map((embedding, j) => {
    const f = syntheticFact(start + j);
    const contentHash = stableHash(f.text);
    return {
      id: stableUuid(scope.tenantId, scope.agentId, scope.userId, contentHash),
      text: f.text,
      embedding,
      turnRefs: [`t${start + j}`],
      sessionId: `s${Math.floor((start + j) / 50)}`,
      validAt: f.validAt,
      createdAt,
      contentHash,
    };
  });
}

/** Seed `count` synthetic ACUs for `scope` through the runtime's embedder and index. */
export async function seedAcus(rt: Runtime, scope: Scope, count: number, label: string): Promise<void> {
  let done = 0;
  const progress = startProgress(label, () => `${done}/${count} ACUs`);
  const now = iso(Date.now());
  for (let start = 0; start < count; start += 500) {
    const texts = Array.from({ length: Math.min(500, count - start) }, (_, j) => syntheticFact(start + j).text);
    const acus = syntheticAcus(scope, start, await rt.ports.embedder.embed(texts), now);
    await rt.ports.acus.upsert(scope, acus);
    done += acus.length;
  }
  progress.stop(`${count} ACUs indexed`);
}

/** Raw exact cosine top-k over a packed matrix: the floor any vector search over the same data pays. */
export function rawTopK(matrix: Float32Array, dim: number, query: Float32Array, k: number): number[] {
  const n = matrix.length / dim;
  const best: Array<[number, number]> = [];
  for (let i = 0; i < n; i++) {
    let dot = 0;
    const off = i * dim;
    for (let d = 0; d < dim; d++) dot += matrix[off + d]! * query[d]!;
    if (best.length < k || dot > best[best.length - 1]![1]) {
      best.push([i, dot]);
      best.sort((a, b) => b[1] - a[1]);
      if (best.length > k) best.pop();
    }
  }
  return best.map((b) => b[0]);
}

/**
 * memory_search over 10,000 ACUs per user, in process through MemoryService.search
 * (the same call the gateway makes), semantic only and hybrid (BM25 fused by RRF),
 * beside a raw exact-cosine scan of the same vectors with the same query embedding.
 */
export const searchSuite: Suite = {
  name: 'search',
  title: 'Memory search, 10,000 ACUs per user (embedded default)',
  quick: true,
  async run(ctx): Promise<SuiteOutcome> {
    const acusPerUser = 10_000;
    const queries = ctx.profile === 'full' ? 1000 : 200;
    const dbPath = join(ctx.tmpDir, 'search', 'memgate.db');
    const scope: Scope = { tenantId: DEV_TENANT, agentId: `bench-search-${ctx.runId}`, userId: 'heavy-user' };
    const base = { sqlite: { path: dbPath }, log: { level: 'warn' as const } };
    const seedRt = await createRuntime(defaultConfig(base), { logger: silentLogger });
    const figures: Figure[] = [];
    const details: Record<string, unknown> = { acusPerUser, queries, k: 5, embedder: seedRt.ports.embedder.id, dimensions: seedRt.ports.embedder.dimensions };
    try {
      await seedAcus(seedRt, scope, acusPerUser, 'seeding');
      // A second user of the same size, so per-user filtering is part of what is measured.
      await seedAcus(seedRt, { ...scope, userId: 'other-user' }, ctx.profile === 'full' ? acusPerUser : 2000, 'seeding other user');
    } finally {
      await seedRt.close();
    }
    const qs = Array.from({ length: queries }, (_, i) => syntheticQuery(i));

    const modes: Array<{ name: string; hybrid: boolean }> = [
      { name: 'semantic only', hybrid: false },
      { name: 'hybrid (vector + BM25, RRF)', hybrid: true },
    ];
    const runs: Record<string, { summary: LatencySummary; coldFirstQueryMs: number; meanResults: number }> = {};
    for (const mode of modes) {
      const rt = await createRuntime(defaultConfig({ ...base, memory: { hybrid: mode.hybrid } }), { logger: silentLogger });
      try {
        const c0 = performance.now();
        await rt.service.search(scope, 'warm-up query about a guitar');
        const coldFirstQueryMs = performance.now() - c0;
        const samples: number[] = [];
        let results = 0;
        const progress = startProgress(`search ${mode.name}`, () => `${samples.length}/${queries} queries`);
        const t0 = performance.now();
        for (const q of qs) {
          const a = performance.now();
          const reply = await rt.service.search(scope, q, { k: 5 });
          samples.push(performance.now() - a);
          results += reply.results.length;
        }
        const summary = summarizeMs(samples, 0, (performance.now() - t0) / 1000);
        progress.stop(`done: p50 ${summary.p50Ms} ms, p95 ${summary.p95Ms} ms`);
        runs[mode.name] = { summary, coldFirstQueryMs, meanResults: results / queries };
      } finally {
        await rt.close();
      }
    }

    say('  baseline: raw exact cosine scan of the same vectors');
    const rt = await createRuntime(defaultConfig(base), { logger: silentLogger });
    let baseline: LatencySummary;
    try {
      const dim = rt.ports.embedder.dimensions;
      const vectors = await rt.ports.embedder.embed(Array.from({ length: acusPerUser }, (_, i) => syntheticFact(i).text));
      const matrix = new Float32Array(acusPerUser * dim);
      vectors.forEach((v, i) => matrix.set(v, i * dim));
      const samples: number[] = [];
      const t0 = performance.now();
      for (const q of qs) {
        const a = performance.now();
        const [qv] = await rt.ports.embedder.embed([q]);
        rawTopK(matrix, dim, qv!, 5);
        samples.push(performance.now() - a);
      }
      baseline = summarizeMs(samples, 0, (performance.now() - t0) / 1000);
    } finally {
      await rt.close();
    }
    for (const mode of modes) {
      const r = runs[mode.name]!;
      figures.push(
        ...latencyFigures(`memory_search ${mode.name}, 10k ACUs`, r.summary, { label: 'naive exact cosine scan + embed', summary: baseline }, { p95Ms: below(50, 'p95 < 50 ms') }).filter(
          (f) => f.metric !== 'errors',
        ),
      );
      figures.push(figure({ bench: `memory_search ${mode.name}, 10k ACUs`, metric: 'first query (cold cache)', value: Math.round(r.coldFirstQueryMs * 1000) / 1000, unit: 'ms' }));
    }
    details['runs'] = runs;
    details['baseline'] = baseline;
    return { status: 'ok', figures, details };
  },
};
