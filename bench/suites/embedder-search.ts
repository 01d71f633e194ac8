import { join } from 'node:path';
import { FusedEmbedder } from '../../src/adapters/fused/index.ts';
import { encoderView } from '../../src/text/encoder-view.ts';
import { OfflineEmbedder } from '../../src/adapters/offline/index.ts';
import { UseLiteEmbedder, type UseLiteRuntime } from '../../src/adapters/use-lite/index.ts';
import { createRuntime } from '../../src/app/wiring.ts';
import { defaultConfig } from '../../src/config/config-schema.ts';
import { iso } from '../../src/core/clock.ts';
import { stableHash, stableUuid } from '../../src/core/ids.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { Acu, Scope } from '../../src/core/types.ts';
import { syntheticFact, syntheticQuery } from '../load/synthetic-facts.ts';
import { say, startProgress } from '../lib/progress.ts';
import { round3, summarizeMs, type LatencySummary } from '../lib/stats.ts';
import { DEV_TENANT } from './start.ts';

/** The embedders the LoCoMo suite compares (values of MEMGATE_EMBEDDER that need no endpoint). */
export type LocalEmbedder = 'offline' | 'use-lite' | 'fused';

/** What it costs to run the sentence encoder in this process. */
export interface ModelCost {
  /** First load (weights read, graph built, wasm backend up). */
  loadMs: number;
  /** RSS growth of this process from loading the model and embedding with it. */
  rssDeltaMiB: number;
  /** One sentence per call (how a search embeds its query), p50 / p95 over LoCoMo questions. */
  singleP50Ms: number;
  singleP95Ms: number;
  /** Per sentence in calls of 128 (how an extraction embeds its ACUs). */
  batchedPerSentenceMs: number;
}

/** memory_search latency of one embedder over 10k ACUs of one user. */
export interface EmbedderSearch {
  embedder: string;
  dimensions: number;
  summary: LatencySummary;
  coldFirstQueryMs: number;
}

const mib = (bytes: number) => round3(bytes / 1024 / 1024);
const pick = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

/** Load USE-lite on `runtime` in this process and time it: load, one sentence per call, batches of 128. */
export async function measureModelCost(sentences: readonly string[], runtime: UseLiteRuntime): Promise<ModelCost> {
  const rss0 = process.memoryUsage().rss;
  const use = new UseLiteEmbedder({ batchSize: 128, runtime, cacheSize: 0 });
  const loadMs = await use.warm();
  const single: number[] = [];
  const texts = sentences.slice(0, 200);
  for (const t of texts) {
    const a = performance.now();
    await use.embed([t]);
    single.push(performance.now() - a);
  }
  single.sort((a, b) => a - b);
  const batch = sentences.slice(0, 512);
  const b0 = performance.now();
  for (let i = 0; i < batch.length; i += 128) await use.embed(batch.slice(i, i + 128));
  const batchedPerSentenceMs = (performance.now() - b0) / Math.max(1, batch.length);
  return {
    loadMs: round3(loadMs),
    rssDeltaMiB: mib(process.memoryUsage().rss - rss0),
    singleP50Ms: round3(pick(single, 0.5)),
    singleP95Ms: round3(pick(single, 0.95)),
    batchedPerSentenceMs: round3(batchedPerSentenceMs),
  };
}

/**
 * memory_search p95 with each embedder over 10,000 ACUs of one user (plus 2,000 of
 * another), in process through MemoryService.search like the search suite. The
 * sentence encoder embeds the 10k synthetic facts once; the fused index gets the
 * same vectors fused with the hashing ones (checked against the runtime's own
 * fused embedder on a sample), so the model does not run twice over 10k texts.
 */
export async function searchByEmbedder(tmpDir: string, runId: string, embedders: readonly LocalEmbedder[], queries: number): Promise<EmbedderSearch[]> {
  const acusPerUser = 10_000;
  const facts = Array.from({ length: acusPerUser }, (_, i) => syntheticFact(i));
  const texts = facts.map((f) => f.text);
  const hashing = new OfflineEmbedder();
  const hashVectors = texts.map((t) => hashing.embedOne(t));
  let useVectors: Float32Array[] | null = null;
  const useLite = async (): Promise<Float32Array[]> => {
    if (useVectors) return useVectors;
    const use = new UseLiteEmbedder({ batchSize: 128 });
    const out: Float32Array[] = [];
    const progress = startProgress('use-lite embedding 10k ACUs', () => `${out.length}/${texts.length}`);
    for (let i = 0; i < texts.length; i += 500) {
      out.push(...(await use.embed(texts.slice(i, i + 500))));
      await new Promise((resolve) => setImmediate(resolve)); // let the progress line print
    }
    progress.stop(`use-lite embedded ${texts.length} ACUs`);
    return (useVectors = out);
  };
  const qs = Array.from({ length: queries }, (_, i) => syntheticQuery(i));
  const results: EmbedderSearch[] = [];
  for (const name of embedders) {
    const config = defaultConfig({ sqlite: { path: join(tmpDir, `search-${name}`, 'memgate.db') }, log: { level: 'warn' }, adapters: { embedder: name } });
    const rt = await createRuntime(config, { logger: silentLogger });
    try {
      let vectors: Float32Array[];
      if (name === 'offline') vectors = hashVectors;
      else if (name === 'use-lite') vectors = await useLite();
      else {
        const share = config.embeddings.fusedSemanticShare;
        const fused = new FusedEmbedder([
          { embedder: hashing, weight: 1 - share },
          { embedder: new UseLiteEmbedder(), weight: share, costly: true, view: encoderView },
        ]);
        // The runtime's encoder reads each text's encoderView: texts it changes are embedded again.
        const use = await useLite();
        const viewed = texts.map((t) => encoderView(t));
        const changed = viewed.flatMap((v, i) => (v === texts[i] ? [] : [i]));
        const again = changed.length > 0 ? await new UseLiteEmbedder({ batchSize: 128 }).embed(changed.map((i) => viewed[i]!)) : [];
        const useViewed = [...use];
        changed.forEach((i, j) => (useViewed[i] = again[j]!));
        vectors = hashVectors.map((h, i) => fused.fuse([h, useViewed[i]!]));
        const sample = [0, 1234, 9999];
        const own = await rt.ports.embedder.embed(sample.map((i) => texts[i]!));
        for (const [j, i] of sample.entries()) {
          const diff = own[j]!.reduce((m, v, d) => Math.max(m, Math.abs(v - vectors[i]![d]!)), 0);
          if (diff > 1e-5) throw new Error(`fused vectors of the bench differ from the runtime's fused embedder by ${diff}`);
        }
      }
      const scope: Scope = { tenantId: DEV_TENANT, agentId: `bench-embedders-${runId}`, userId: 'heavy-user' };
      const now = iso(Date.now());
      const seed = async (s: Scope, count: number) => {
        for (let start = 0; start < count; start += 1000) {
          const acus: Acu[] = [];
          for (let i = start; i < Math.min(count, start + 1000); i++) {
            const contentHash = stableHash(texts[i]!);
            acus.push({
              id: stableUuid(s.tenantId, s.agentId, s.userId, contentHash),
              text: texts[i]!,
              embedding: vectors[i]!,
              turnRefs: [`t${i}`],
              sessionId: `s${Math.floor(i / 50)}`,
              validAt: facts[i]!.validAt,
              createdAt: now,
              contentHash,
            });
          }
          await rt.ports.acus.upsert(s, acus);
        }
      };
      await seed(scope, acusPerUser);
      await seed({ ...scope, userId: 'other-user' }, 2000);
      const c0 = performance.now();
      await rt.service.search(scope, 'warm-up query about a guitar');
      const coldFirstQueryMs = performance.now() - c0;
      const samples: number[] = [];
      const progress = startProgress(`search with ${name}`, () => `${samples.length}/${queries} queries`);
      const t0 = performance.now();
      for (const q of qs) {
        const a = performance.now();
        await rt.service.search(scope, q, { k: 5 });
        samples.push(performance.now() - a);
      }
      const summary = summarizeMs(samples, 0, (performance.now() - t0) / 1000);
      progress.stop(`${name}: p50 ${summary.p50Ms} ms, p95 ${summary.p95Ms} ms over ${acusPerUser} ACUs (${rt.ports.embedder.dimensions}-d)`);
      results.push({ embedder: rt.ports.embedder.id, dimensions: rt.ports.embedder.dimensions, summary, coldFirstQueryMs: round3(coldFirstQueryMs) });
    } finally {
      await rt.close();
    }
  }
  say(`  search by embedder: ${results.map((r) => `${r.embedder} p95 ${r.summary.p95Ms} ms`).join('; ')}`);
  return results;
}
