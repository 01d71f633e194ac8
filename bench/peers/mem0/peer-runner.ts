/**
 * Runs mem0's open-source `Memory` (mem0ai, installed in this folder only) in its
 * own process against the bench's fake OpenAI-compatible server, and prints one
 * JSON line of timings. Started by bench/suites/peer.ts with MEM0_TELEMETRY=false
 * and HOME pointing at a temp dir, so nothing leaves the machine or the run.
 * mem0ai is imported through a computed specifier: the repository type-checks
 * without this folder's node_modules.
 */

/** What the suite sends (env MEM0_PEER_SPEC, JSON). */
export interface PeerSpec {
  fakeUrl: string;
  dataDir: string;
  userId: string;
  turns: Array<{ role: 'user' | 'assistant'; content: string }>;
  queries: string[];
  dimensions: number;
}

/** What the runner prints. */
export interface PeerResult {
  version: string;
  addMs: number[];
  addErrors: number;
  addRawMs: number[];
  searchMs: number[];
  searchErrors: number;
  meanSearchResults: number;
  memories: number;
  firstError: string | null;
}

interface Mem0Memory {
  add(messages: Array<{ role: string; content: string }>, config: { userId: string; infer?: boolean }): Promise<{ results: unknown[] }>;
  search(query: string, config: { filters: { user_id: string }; topK?: number }): Promise<{ results: unknown[] }>;
  getAll(config: { filters: { user_id: string }; topK?: number }): Promise<{ results: unknown[] }>;
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.env['MEM0_PEER_SPEC'] ?? '{}') as PeerSpec;
  const specifier = 'mem0ai/oss';
  const mod = (await import(specifier)) as { Memory: new (config: Record<string, unknown>) => Mem0Memory };
  const memory = new mod.Memory({
    version: 'v1.1',
    embedder: { provider: 'openai', config: { apiKey: 'bench', baseURL: spec.fakeUrl, model: 'fake-embedding', embeddingDims: spec.dimensions } },
    vectorStore: { provider: 'memory', config: { collectionName: 'bench', dimension: spec.dimensions, dbPath: `${spec.dataDir}/vector_store.db` } },
    llm: { provider: 'openai', config: { apiKey: 'bench', baseURL: spec.fakeUrl, model: 'fake-300ms' } },
    historyStore: { provider: 'sqlite', config: { historyDbPath: `${spec.dataDir}/history.db` } },
  });
  const r: PeerResult = { version: '3.3.1', addMs: [], addErrors: 0, addRawMs: [], searchMs: [], searchErrors: 0, meanSearchResults: 0, memories: 0, firstError: null };
  for (const turn of spec.turns) {
    const t0 = performance.now();
    try {
      await memory.add([turn], { userId: spec.userId });
      r.addMs.push(performance.now() - t0);
    } catch (err) {
      r.addErrors += 1;
      r.firstError ??= String(err);
    }
  }
  // mem0's documented fast path: store the message as is, no LLM (what a latency-bound caller could do).
  for (const turn of spec.turns) {
    const t0 = performance.now();
    try {
      await memory.add([turn], { userId: `${spec.userId}-raw`, infer: false });
      r.addRawMs.push(performance.now() - t0);
    } catch (err) {
      r.addErrors += 1;
      r.firstError ??= String(err);
    }
  }
  let results = 0;
  for (const q of spec.queries) {
    const t0 = performance.now();
    try {
      const reply = await memory.search(q, { filters: { user_id: spec.userId }, topK: 5 });
      r.searchMs.push(performance.now() - t0);
      results += reply.results.length;
    } catch (err) {
      r.searchErrors += 1;
      r.firstError ??= String(err);
    }
  }
  r.meanSearchResults = spec.queries.length > 0 ? results / spec.queries.length : 0;
  r.memories = (await memory.getAll({ filters: { user_id: spec.userId }, topK: 1000 })).results.length;
  process.stdout.write(JSON.stringify(r) + '\n');
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`mem0 peer failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
