import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Acu, Scope, Turn } from '../../src/core/types.ts';
import type { AcuHit, AcuIndex, AcuIndexCapabilities } from '../../src/ports/acu-index.ts';
import type { ColdArchive, ColdHit } from '../../src/ports/cold-archive.ts';
import type { Embedder } from '../../src/ports/embedder.ts';
import { cosine } from '../../src/memory/cosine.ts';
import { searchCascade, type CascadeOptions } from '../../src/memory/search-cascade.ts';
import { SemanticTiers } from '../../src/memory/semantic-tiers.ts';

// --- the domain's own test doubles -------------------------------------------------

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const words = (s: string) => s.toLowerCase().match(/[a-z0-9₹]{3,}/g) ?? [];

/** Maps known queries to fixed unit vectors, so every cosine in a test is chosen by hand. */
class TableEmbedder implements Embedder {
  readonly id = 'table';
  readonly dimensions = 3;
  calls = 0;
  constructor(
    private readonly table: Record<string, number[]>,
    private readonly delayMs = 0,
  ) {}
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.calls++;
    if (this.delayMs > 0) await sleep(this.delayMs);
    return texts.map((t) => Float32Array.from(this.table[t] ?? [0, 1, 0]));
  }
}

/** Exact cosine over stored ACUs; keyword leg = count of shared words. `vectorCap` mimics an ANN reply limit. */
class MemoryAcuIndex implements AcuIndex {
  readonly capabilities: AcuIndexCapabilities;
  private readonly acus: Acu[] = [];
  constructor(opts: { bm25: boolean; vectorCap?: number; keywordDelayMs?: number }) {
    this.capabilities = { bm25: opts.bm25 };
    this.vectorCap = opts.vectorCap ?? Infinity;
    this.keywordDelayMs = opts.keywordDelayMs ?? 0;
  }
  private readonly vectorCap: number;
  private readonly keywordDelayMs: number;
  async upsert(_scope: Scope, acus: readonly Acu[]): Promise<void> {
    this.acus.push(...acus);
  }
  async search(_scope: Scope, vector: Float32Array, k: number): Promise<AcuHit[]> {
    return this.acus
      .map((acu) => ({ acu, score: cosine(vector, acu.embedding) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, Math.min(k, this.vectorCap));
  }
  async nearestMany(scope: Scope, vectors: readonly Float32Array[], k: number): Promise<AcuHit[][]> {
    return Promise.all(vectors.map((v) => this.search(scope, v, k)));
  }
  async keywordSearch(_scope: Scope, query: string, k: number): Promise<AcuHit[]> {
    if (this.keywordDelayMs > 0) await sleep(this.keywordDelayMs);
    const q = new Set(words(query));
    return this.acus
      .map((acu) => ({ acu, score: words(acu.text).filter((w) => q.has(w)).length }))
      .filter((h) => h.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, k);
  }
  async count(): Promise<number> {
    return this.acus.length;
  }
  async forget(): Promise<void> {
    this.acus.length = 0;
  }
  async close(): Promise<void> {}
}

class MemoryColdArchive implements ColdArchive {
  calls = 0;
  private readonly turns: Turn[] = [];
  constructor(private readonly delayMs = 0) {}
  async archive(_scope: Scope, turns: readonly Turn[]): Promise<void> {
    this.turns.push(...turns);
  }
  async search(_scope: Scope, query: string, k: number): Promise<ColdHit[]> {
    this.calls++;
    if (this.delayMs > 0) await sleep(this.delayMs);
    const q = new Set(words(query));
    return this.turns
      .map((turn) => ({ turn, rank: words(turn.text).filter((w) => q.has(w)).length }))
      .filter((h) => h.rank > 0)
      .sort((a, b) => b.rank - a.rank)
      .slice(0, k);
  }
  async count(): Promise<number> {
    return this.turns.length;
  }
  async forget(): Promise<void> {
    this.turns.length = 0;
  }
  async close(): Promise<void> {}
}

// --- fixtures ------------------------------------------------------------------------

const scope = (): Scope => ({ tenantId: `t-${randomUUID()}`, agentId: 'agent', userId: 'user' });
const Q = [1, 0, 0];
/** A unit vector whose cosine with Q is `c`. */
const at = (c: number, axis: 1 | 2 = 1): number[] => (axis === 1 ? [c, Math.sqrt(1 - c * c), 0] : [c, 0, Math.sqrt(1 - c * c)]);

function acu(id: string, text: string, vector: number[], turnRefs: string[] = [`turn-${id}`]): Acu {
  return { id, text, embedding: Float32Array.from(vector), turnRefs, sessionId: 's1', validAt: '2026-01-10T00:00:00.000Z', createdAt: '2026-01-11T00:00:00.000Z', contentHash: id };
}

function turn(turnId: string, text: string, day: string): Turn {
  const ts = Date.parse(`${day}T09:30:00Z`);
  return { turnId, seq: 1, sessionId: 's0', role: 'user', speaker: 'Rajiv Kumar', text, ts, receivedAt: ts, tokens: 10 };
}

const options = (o: Partial<CascadeOptions> = {}): CascadeOptions => ({ k: 3, hybrid: true, rrfK: 60, confidenceThreshold: 0.35, ...o });

async function setup(o: { bm25?: boolean; vectorCap?: number; keywordDelayMs?: number; embedDelayMs?: number; coldDelayMs?: number; acus?: Acu[]; turns?: Turn[] }) {
  const s = scope();
  const acus = new MemoryAcuIndex({ bm25: o.bm25 ?? true, vectorCap: o.vectorCap, keywordDelayMs: o.keywordDelayMs });
  const cold = new MemoryColdArchive(o.coldDelayMs);
  const embedder = new TableEmbedder({ 'Baner flat budget': Q, 'Koregaon Park flat': Q }, o.embedDelayMs);
  await acus.upsert(s, o.acus ?? []);
  await cold.archive(s, o.turns ?? []);
  return { s, acus, cold, embedder, deps: { acus, cold, embedder, now: () => Date.now() } };
}

const strongAcus = () => [
  acu('a1', "Rajiv's budget for the Baner flat is ₹80 lakh", at(0.9)),
  acu('a2', 'Rajiv prefers east-facing homes', at(0.7)),
  acu('a3', 'The Baner site visit is on 20 January', at(0.3, 2)),
];

// --- tests ---------------------------------------------------------------------------

describe('searchCascade: ACU tiers', () => {
  it('vector only: source acu, score = cosine, confidence by threshold', async () => {
    const { s, deps, cold } = await setup({ bm25: false, acus: strongAcus() });
    const { results, partial } = await searchCascade(deps, s, 'Baner flat budget', options({ k: 2 }));
    expect(partial).toBe(false);
    expect(results.map((r) => r.text)).toEqual(["Rajiv's budget for the Baner flat is ₹80 lakh", 'Rajiv prefers east-facing homes']);
    expect(results.map((r) => r.source)).toEqual(['acu', 'acu']);
    expect(results[0]!.score).toBeCloseTo(0.9, 5);
    expect(results[1]!.score).toBeCloseTo(0.7, 5);
    expect(results.map((r) => r.confidence)).toEqual(['high', 'high']);
    expect(results[0]).toMatchObject({ turnRefs: ['turn-a1'], validAt: '2026-01-10T00:00:00.000Z' });
    expect(cold.calls).toBe(0);
  });

  it('hybrid: both legs → hybrid, vector-only → acu, keyword-only → hybrid scored by its stored cosine', async () => {
    const { s, deps } = await setup({ vectorCap: 2, acus: strongAcus() });
    const { results } = await searchCascade(deps, s, 'Baner flat budget', options({ k: 3 }));
    expect(results.map((r) => [r.text.slice(0, 12), r.source])).toEqual([
      ["Rajiv's budg", 'hybrid'],
      ['Rajiv prefer', 'acu'],
      ['The Baner si', 'hybrid'],
    ]);
    const bonusOne = (0.05 * (1 / 62)) / (2 / 61);
    expect(results[0]!.score).toBeCloseTo(0.9 + 0.05, 5);
    expect(results[1]!.score).toBeCloseTo(0.7 + bonusOne, 5);
    expect(results[2]!.score).toBeCloseTo(0.3 + bonusOne, 5);
    expect(results[2]!.confidence).toBe('low');
    for (const r of results) expect(r.score).toBeGreaterThan(0);
    for (const r of results) expect(r.score).toBeLessThanOrEqual(1);
    const scores = results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('returns at most k results', async () => {
    const { s, deps } = await setup({ acus: strongAcus() });
    expect((await searchCascade(deps, s, 'Baner flat budget', options({ k: 1 }))).results).toHaveLength(1);
  });
});

describe('searchCascade: cold fallback', () => {
  const weak = () => [acu('b1', 'Rajiv asked about flats in Koregaon Park', at(0.3), ['c1']), acu('b2', 'Rajiv likes parks', at(0.2))];
  const archived = () => [
    turn('c1', 'Do you have any flat in Koregaon Park?', '2026-01-03'),
    turn('c2', 'Koregaon Park is too expensive for me', '2026-01-04'),
    turn('c3', 'What about a flat near the park?', '2026-01-05'),
  ];

  it('falls back below the threshold, scoring cold turns below every ACU result and the threshold', async () => {
    const { s, deps, cold } = await setup({ bm25: false, acus: weak(), turns: archived() });
    const { results, partial } = await searchCascade(deps, s, 'Koregaon Park flat', options({ k: 4 }));
    expect(partial).toBe(false);
    expect(cold.calls).toBe(1);
    const acuScores = results.filter((r) => r.source !== 'cold').map((r) => r.score);
    const coldResults = results.filter((r) => r.source === 'cold');
    expect(acuScores).toHaveLength(2);
    expect(coldResults.map((r) => r.turnRefs)).toEqual([['c2'], ['c3']]); // c1 is covered by ACU b1
    for (const c of coldResults) {
      expect(c.score).toBeLessThan(Math.min(...acuScores));
      expect(c.score).toBeLessThan(0.35);
      expect(c.confidence).toBe('low');
    }
    expect(coldResults[0]).toMatchObject({ text: 'Rajiv Kumar (user) on 2026-01-04: Koregaon Park is too expensive for me', validAt: '2026-01-04T09:30:00.000Z' });
    expect(coldResults[0]!.score).toBeGreaterThan(coldResults[1]!.score);
  });

  it('reserves room for cold turns when k weak ACU results would fill the reply', async () => {
    const many = [0.3, 0.28, 0.26, 0.24, 0.22].map((c, i) => acu(`w${i}`, `weak fact ${i}`, at(c)));
    const { s, deps } = await setup({ bm25: false, acus: many, turns: archived() });
    const { results } = await searchCascade(deps, s, 'Koregaon Park flat', options({ k: 5 }));
    expect(results.map((r) => r.source)).toEqual(['acu', 'acu', 'acu', 'cold', 'cold']);
    expect(results[3]!.score).toBeLessThan(results[2]!.score);
  });

  it('falls back with fewer than k results even when they are strong', async () => {
    const { s, deps, cold } = await setup({ bm25: false, acus: [acu('a1', 'Koregaon Park flat shortlisted', at(0.9))], turns: archived() });
    const { results } = await searchCascade(deps, s, 'Koregaon Park flat', options({ k: 3 }));
    expect(cold.calls).toBe(1);
    expect(results.map((r) => r.source)).toEqual(['acu', 'cold', 'cold']);
    expect(results[1]!.score).toBeLessThan(0.35);
  });

  it('answers from cold storage alone when no ACU exists', async () => {
    const { s, deps } = await setup({ turns: archived() });
    const { results } = await searchCascade(deps, s, 'Koregaon Park flat', options({ k: 3 }));
    expect(results.map((r) => r.source)).toEqual(['cold', 'cold', 'cold']);
    for (const r of results) expect(r.score).toBeLessThan(0.35);
  });
});

describe('searchCascade: deadline', () => {
  it('a slow embedder yields an empty partial reply within the budget', async () => {
    const { s, deps } = await setup({ embedDelayMs: 400, acus: strongAcus() });
    const reply = await searchCascade(deps, s, 'Baner flat budget', options({ deadlineMs: 30 }));
    expect(reply).toEqual({ results: [], partial: true });
  });

  it('a slow cold archive yields the ACU results with partial: true', async () => {
    const { s, deps } = await setup({ bm25: false, coldDelayMs: 400, acus: [acu('b1', 'weak', at(0.2))], turns: [turn('c9', 'Koregaon Park flat', '2026-01-02')] });
    const reply = await searchCascade(deps, s, 'Koregaon Park flat', options({ deadlineMs: 60 }));
    expect(reply.partial).toBe(true);
    expect(reply.results.map((r) => r.source)).toEqual(['acu']);
  });

  it('a slow keyword leg is dropped and the vector results come back partial', async () => {
    const { s, deps } = await setup({ keywordDelayMs: 400, acus: strongAcus() });
    const reply = await searchCascade(deps, s, 'Baner flat budget', options({ k: 2, deadlineMs: 60 }));
    expect(reply.partial).toBe(true);
    expect(reply.results.map((r) => r.source)).toEqual(['acu', 'acu']);
  });

  it('without a deadline slow tiers are awaited', async () => {
    const { s, deps } = await setup({ bm25: false, coldDelayMs: 20, turns: [turn('c9', 'Koregaon Park flat', '2026-01-02')] });
    const reply = await searchCascade(deps, s, 'Koregaon Park flat', options());
    expect(reply.partial).toBe(false);
    expect(reply.results.map((r) => r.turnRefs)).toEqual([['c9']]);
  });
});

describe('searchCascade: fact and recent tiers by meaning', () => {
  const QUERY = 'which area is she looking at';
  /** The query and the agent's question point one way, the caller's answer another; `delayMs` slows every call but the query's. */
  class MeaningEmbedder implements Embedder {
    readonly id = 'meaning';
    readonly dimensions = 3;
    readonly cosineScale = { meaning: true, floor: 0.2, strong: 0.4 };
    readonly texts: string[] = [];
    constructor(private readonly delayMs = 0) {}
    async embed(texts: readonly string[]): Promise<Float32Array[]> {
      this.texts.push(...texts);
      if (this.delayMs > 0 && !texts.includes(QUERY)) await sleep(this.delayMs);
      return texts.map((t) => Float32Array.from(t === QUERY || t.startsWith('Which area') ? Q : at(0.05)));
    }
  }
  const ask = { ...turn('q1', 'Which area are you considering?', '2026-01-05'), role: 'agent' as const, seq: 1 };
  const answer = { ...turn('a1', 'I want a 3 BHK in Koramangala.', '2026-01-05'), seq: 2 };

  async function run(delayMs: number, deadlineMs?: number) {
    const { s, deps } = await setup({});
    const embedder = new MeaningEmbedder(delayMs);
    const memory = { hot: async () => null, buffered: async () => [ask, answer], schema: async () => ({ fields: [] }) };
    const reply = await searchCascade({ ...deps, embedder, memory, semantic: SemanticTiers.for(embedder) }, s, QUERY, options(deadlineMs === undefined ? {} : { deadlineMs }));
    return { reply, embedder };
  }

  it("finds the caller's answer through the agent's question, embedding the query once", async () => {
    const { reply, embedder } = await run(0);
    expect(reply.results[0]).toMatchObject({ source: 'recent', turnRefs: ['q1', 'a1'] });
    expect(embedder.texts.filter((t) => t === QUERY)).toHaveLength(1);
  });

  it('with no deadline, waits for turn vectors at most meaningWaitMs: words first, meaning once they are cached', async () => {
    const { s, deps } = await setup({});
    // Turn texts are held until the test lets them through: only the cap can end the first search's wait.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const inner = new MeaningEmbedder();
    const calls: Array<Promise<unknown>> = [];
    const embedder: Embedder = {
      id: inner.id,
      dimensions: inner.dimensions,
      cosineScale: inner.cosineScale,
      embed(texts) {
        const call = (async () => {
          if (!texts.includes(QUERY)) await gate;
          return inner.embed(texts);
        })();
        calls.push(call);
        return call;
      },
    };
    const memory = { hot: async () => null, buffered: async () => [ask, answer], schema: async () => ({ fields: [] }) };
    const search = () => searchCascade({ ...deps, embedder, memory, semantic }, s, QUERY, options({ meaningWaitMs: 5 }));
    const semantic = SemanticTiers.for(embedder);
    const first = await search();
    expect(first.partial).toBe(false);
    expect(first.results.filter((r) => r.source === 'recent')).toEqual([]);
    release();
    await Promise.all(calls);
    const later = await search();
    expect(later.results[0]).toMatchObject({ source: 'recent', turnRefs: ['q1', 'a1'] });
  });

  it('scores by words when the turn embedding would overrun the budget, and the reply is not partial', async () => {
    const { reply } = await run(200, 60);
    // By words the question shares one content word with the query ("area"): chance, no result; and nothing is marked wrong.
    expect(reply.partial).toBe(false);
    expect(reply.results.filter((r) => r.source === 'recent')).toEqual([]);
  });
});
