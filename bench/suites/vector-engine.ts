import { statSync } from 'node:fs';
import { join } from 'node:path';
import { openSqlite } from '../../src/adapters/sqlite/index.ts';
import { createRuntime } from '../../src/app/wiring.ts';
import { defaultConfig } from '../../src/config/config-schema.ts';
import { iso } from '../../src/core/clock.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { Scope } from '../../src/core/types.ts';
import { prng } from '../load/turn-text.ts';
import { syntheticFact, syntheticQuery } from '../load/synthetic-facts.ts';
import { say, startProgress } from '../lib/progress.ts';
import type { Figure } from '../lib/report-types.ts';
import { round3, summarizeMs, type LatencySummary } from '../lib/stats.ts';
import type { Suite, SuiteOutcome } from '../lib/suite.ts';
import { atLeast, below, figure } from '../lib/targets.ts';
import { latencyFigures } from './latency-figures.ts';
import { rawTopK, syntheticAcus } from './search.ts';
import { DEV_TENANT } from './start.ts';

/** One measured corpus: its size and where its vectors come from. */
interface Corpus {
  acus: number;
  /** `embedded`: the runtime's default embedder on generated sentences; `synthetic`: topic-clustered random vectors of its size. */
  vectors: 'embedded' | 'synthetic';
  /** Target of the vector leg's p95 (issue 17). */
  p95TargetMs: number;
}

const RECALL_K = 10;
/** What memory_search asks the vector leg for with k = 5 (CANDIDATE_FACTOR 3 in search-cascade.ts). */
const LEG_DEPTH = 15;
const mib = (bytes: number) => round3(bytes / 1024 / 1024);

function unit(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  return v.map((x) => x / n);
}

/** Topic-clustered vectors (what sentence embeddings look like): a centre of 200 plus as much noise. */
function clusteredVectors(count: number, dim: number, seed: number): Float32Array[] {
  const random = prng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(random() || 1e-12)) * Math.cos(2 * Math.PI * random());
  const centres = Array.from({ length: 200 }, () => Float32Array.from({ length: dim }, gauss));
  return Array.from({ length: count }, () => {
    const c = centres[Math.floor(random() * centres.length)]!;
    return unit(Float32Array.from({ length: dim }, (_, j) => c[j]! + gauss()));
  });
}

async function timed(queries: readonly Float32Array[], run: (q: Float32Array) => unknown): Promise<LatencySummary> {
  const samples: number[] = [];
  const t0 = performance.now();
  for (const q of queries) {
    const a = performance.now();
    await run(q);
    samples.push(performance.now() - a);
  }
  return summarizeMs(samples, 0, (performance.now() - t0) / 1000);
}

/**
 * The embedded vector engine (binary codes held in memory, Hamming scan, exact rescore) for one
 * user of 10k and 100k ACUs: the vector leg's latency beside an exact JS scan of the same vectors
 * in the same run, recall@10 of the leg against that exact scan, the first search (which loads
 * the codes) and the memory the codes take, the full memory_search, the time to index
 * and to backfill a file written before the engine, the database size and the RSS.
 */
export const vectorEngineSuite: Suite = {
  name: 'vectors',
  title: 'Vector engine: in-memory binary codes (Hamming scan) + exact rescore, 10k and 100k ACUs of one user',
  quick: false,
  async run(ctx): Promise<SuiteOutcome> {
    const corpora: Corpus[] =
      ctx.profile === 'full'
        ? [
            { acus: 10_000, vectors: 'embedded', p95TargetMs: 10 },
            { acus: 100_000, vectors: 'synthetic', p95TargetMs: 25 },
          ]
        : [
            { acus: 2_000, vectors: 'embedded', p95TargetMs: 10 },
            { acus: 10_000, vectors: 'synthetic', p95TargetMs: 10 },
          ];
    const queries = Math.max(20, Math.round((ctx.profile === 'full' ? 500 : 100) * ctx.flags.timeScale));
    const figures: Figure[] = [];
    const details: Record<string, unknown> = { queries, legDepth: LEG_DEPTH, recallK: RECALL_K };
    for (const corpus of corpora) {
      const label = `${corpus.acus / 1000}k ${corpus.vectors}`;
      const dbPath = join(ctx.tmpDir, 'vectors', `${corpus.acus}-${corpus.vectors}`, 'memgate.db');
      const config = defaultConfig({ sqlite: { path: dbPath }, log: { level: 'warn' } });
      const scope: Scope = { tenantId: DEV_TENANT, agentId: `bench-vectors-${ctx.runId}`, userId: `user-${corpus.acus}` };
      const rt = await createRuntime(config, { logger: silentLogger });
      const row: Record<string, unknown> = { embedder: rt.ports.embedder.id, dimensions: rt.ports.embedder.dimensions };
      try {
        const dim = rt.ports.embedder.dimensions;
        const queryTexts = Array.from({ length: queries }, (_, i) => syntheticQuery(i));
        let vectors: Float32Array[];
        let queryVectors: Float32Array[];
        if (corpus.vectors === 'embedded') {
          vectors = [];
          const progress = startProgress(`${label}: embedding facts with ${rt.ports.embedder.id}`, () => `${vectors.length}/${corpus.acus}`);
          for (let s = 0; s < corpus.acus; s += 500) vectors.push(...(await rt.ports.embedder.embed(Array.from({ length: Math.min(500, corpus.acus - s) }, (_, j) => syntheticFact(s + j).text))));
          progress.stop(`${label}: ${corpus.acus} facts embedded`);
          queryVectors = await rt.ports.embedder.embed(queryTexts);
        } else {
          say(`  ${label}: generating ${corpus.acus} topic-clustered ${dim}-d vectors`);
          vectors = clusteredVectors(corpus.acus + queries, dim, corpus.acus);
          queryVectors = vectors.splice(corpus.acus, queries);
        }

        // Index build: the upserts alone (rows, FTS and codes), in the runtime's batches.
        const now = iso(Date.now());
        let done = 0;
        const progress = startProgress(`${label}: indexing`, () => `${done}/${corpus.acus} ACUs`);
        const b0 = performance.now();
        for (let s = 0; s < corpus.acus; s += 1000) {
          await rt.ports.acus.upsert(scope, syntheticAcus(scope, s, vectors.slice(s, s + 1000), now));
          done = Math.min(corpus.acus, s + 1000);
        }
        const buildS = (performance.now() - b0) / 1000;
        progress.stop(`${label}: indexed in ${round3(buildS)} s`);
        // Another user of a tenth the size shares the vec0 table: the partition key must keep it out of the way.
        await rt.ports.acus.upsert({ ...scope, userId: 'other-user' }, syntheticAcus({ ...scope, userId: 'other-user' }, 0, vectors.slice(0, Math.ceil(corpus.acus / 10)), now));

        const index = rt.ports.acus;
        const normalised = vectors.map(unit);
        const matrix = new Float32Array(corpus.acus * dim);
        normalised.forEach((v, i) => matrix.set(v, i * dim));
        const idOfRow = syntheticAcus(scope, 0, normalised, now).map((a) => a.id);

        say(`  ${label}: vector leg (k=${LEG_DEPTH}) and exact scan, ${queries} queries each`);
        // The first search loads the user's codes into memory (from the vec0 table): timed on its own, with the RSS it adds.
        const rssBefore = process.memoryUsage().rss;
        const f0 = performance.now();
        await index.search(scope, queryVectors[0]!, LEG_DEPTH);
        const firstMs = round3(performance.now() - f0);
        const codeCache = 'cacheStats' in index && typeof index.cacheStats === 'function' ? (index.cacheStats as () => { bytes: number; users: number })() : undefined;
        const cacheMiB = codeCache ? mib(codeCache.bytes) : 0;
        const cacheRssMiB = mib(process.memoryUsage().rss - rssBefore);
        say(`  ${label}: first search (loads the codes) ${firstMs} ms; codes held ${cacheMiB} MiB, RSS +${cacheRssMiB} MiB`);
        const leg = await timed(queryVectors, (q) => index.search(scope, q, LEG_DEPTH));
        const exact = await timed(queryVectors, (q) => rawTopK(matrix, dim, unit(q), LEG_DEPTH));
        let found = 0;
        for (const q of queryVectors) {
          const truth = new Set(rawTopK(matrix, dim, unit(q), RECALL_K).map((r) => idOfRow[r]));
          found += (await index.search(scope, q, RECALL_K)).filter((h) => truth.has(h.acu.id)).length;
        }
        const recall = round3(found / (queries * RECALL_K));
        say(`  ${label}: leg p50 ${leg.p50Ms} / p95 ${leg.p95Ms} / p99 ${leg.p99Ms} ms; exact scan p95 ${exact.p95Ms} ms; recall@${RECALL_K} ${recall}`);

        say(`  ${label}: memory_search (hybrid, k=5, query embedded by ${rt.ports.embedder.id})`);
        await rt.service.search(scope, 'warm-up query about a guitar');
        let qi = 0;
        const search = await timed(queryVectors, () => rt.service.search(scope, queryTexts[qi++]!, { k: 5 }));
        say(`  ${label}: memory_search p50 ${search.p50Ms} / p95 ${search.p95Ms} / p99 ${search.p99Ms} ms`);
        const rssMiB = mib(process.memoryUsage().rss);

        figures.push(
          ...latencyFigures(`vector leg, ${label}`, leg, { label: 'exact JS scan, same vectors', summary: exact }, { p95Ms: below(corpus.p95TargetMs, `p95 ≤ ${corpus.p95TargetMs} ms`) }).filter((f) =>
            ['p50', 'p95', 'p99'].includes(f.metric),
          ),
          figure({ bench: `vector leg, ${label}`, metric: `recall@${RECALL_K} vs exact`, value: recall, unit: '', target: atLeast(0.99, 'recall ≥ 0.99') }),
          ...latencyFigures(`memory_search, ${label}`, search, null).filter((f) => ['p50', 'p95', 'p99'].includes(f.metric)),
          figure({ bench: `index, ${label}`, metric: 'build (upserts)', value: round3(buildS), unit: 's' }),
          figure({ bench: `index, ${label}`, metric: 'first search (loads the codes)', value: firstMs, unit: 'ms' }),
          figure({ bench: `index, ${label}`, metric: 'codes held in memory', value: cacheMiB, unit: 'MiB' }),
          figure({ bench: `index, ${label}`, metric: 'RSS added by the first search', value: cacheRssMiB, unit: 'MiB' }),
          figure({ bench: `index, ${label}`, metric: 'RSS after', value: rssMiB, unit: 'MiB' }),
        );
        Object.assign(row, { leg, exact, recall, search, buildS: round3(buildS), rssMiB, firstMs, cacheMiB, cacheRssMiB });
      } finally {
        await rt.close();
      }

      // A file written before the engine: drop the codes, time the backfill at the next open.
      const db = openSqlite(dbPath, { checkpointer: false });
      const dim = (row['dimensions'] as number) ?? 0;
      db.exec(`DROP TABLE acu_vec_${dim}`);
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
      const m0 = performance.now();
      const reopened = openSqlite(dbPath, { checkpointer: false });
      const backfillS = (performance.now() - m0) / 1000;
      reopened.pragma('wal_checkpoint(TRUNCATE)');
      reopened.close();
      const dbMiB = mib(statSync(dbPath).size);
      say(`  ${label}: backfill of a pre-engine file at open ${round3(backfillS)} s; database ${dbMiB} MiB`);
      figures.push(
        figure({ bench: `index, ${label}`, metric: 'backfill at open (pre-engine file)', value: round3(backfillS), unit: 's' }),
        figure({ bench: `index, ${label}`, metric: 'database size', value: dbMiB, unit: 'MiB' }),
      );
      Object.assign(row, { backfillS: round3(backfillS), dbMiB });
      details[label] = row;
    }
    return { status: 'ok', figures, details };
  },
};
