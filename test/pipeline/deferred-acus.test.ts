import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testConfig } from '../support/config.ts';
import { RAJIV_FIRST_CALL } from '../support/fixtures.ts';
import { waitFor } from '../support/wait.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { Scope } from '../../src/core/types.ts';
import { createRuntime, type Runtime } from '../../src/app/wiring.ts';
import { FusedEmbedder } from '../../src/adapters/fused/index.ts';
import { OfflineEmbedder } from '../../src/adapters/offline/index.ts';
import type { Embedder } from '../../src/ports/embedder.ts';
import { runExtraction } from '../../src/pipeline/extraction-job.ts';
import { modeOfJob } from '../../src/pipeline/deferred-acus.ts';
import { startExtractionWorker } from '../../src/workers/extraction-worker.ts';
import type { Consumer } from '../../src/ports/job-bus.ts';

// Issue 17: a lane that is behind indexes ACUs with the fused embedder's cheap (hashing) part
// and re-embeds them with the costly part (the sentence encoder) when the CPU allows.

/** A stand-in for the sentence encoder: another hashing embedder of another size that counts the texts it embeds. */
class CountingEncoder implements Embedder {
  readonly id = 'counting-encoder';
  readonly dimensions = 96;
  texts: string[] = [];
  private readonly inner = new OfflineEmbedder({ dimensions: 96 });
  embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.texts.push(...texts);
    return this.inner.embed(texts);
  }
}

const scope: Scope = { tenantId: 't', agentId: 'real-estate', userId: 'rajiv' };
// The call without its goodbye.
const turns = RAJIV_FIRST_CALL.slice(0, 8);

let runtime: Runtime;
let encoder: CountingEncoder;
let fused: FusedEmbedder;
let consumer: Consumer | null = null;

beforeEach(async () => {
  // The index is sized to the fused stand-in below: hashing 384 + encoder 96.
  runtime = await createRuntime(testConfig({ sqlite: { path: ':memory:' }, embeddings: { dimensions: 480 }, memory: { minKeptTurns: 2, maxKeptTurns: 2 }, log: { level: 'silent' } }), {
    logger: silentLogger,
  });
  encoder = new CountingEncoder();
  fused = new FusedEmbedder([
    { embedder: new OfflineEmbedder(), weight: 0.35 },
    { embedder: encoder, weight: 0.65, costly: true },
  ]);
  // The service's extraction deps and search share this ports object.
  (runtime.ports as { embedder: Embedder }).embedder = fused;
  await runtime.service.startSession(scope, 'call-1');
  for (const [i, [role, text]] of turns.entries()) {
    await runtime.service.appendTurn(scope, 'call-1', { role, text, turnId: `t${i}`, ts: Date.parse('2026-01-05T10:00:00Z') + i * 5000 });
  }
});
afterEach(async () => {
  await consumer?.stop();
  consumer = null;
  await runtime.close();
});

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe('the fused embedder without its costly part', () => {
  it('gives unit vectors with the costly coordinates at zero, scoring a full vector at sqrt(cheap share) × the hashing cosine', async () => {
    const text = 'My budget is around 50 lakhs.';
    const [cheap] = await fused.embedLexical!([text]);
    const [full] = await fused.embed([text]);
    const [hashing] = await new OfflineEmbedder().embed([text]);
    expect(Math.hypot(...cheap!)).toBeCloseTo(1, 5);
    expect(cheap!.subarray(384).every((x) => x === 0)).toBe(true);
    expect(encoder.texts).toEqual([text]); // only `embed` ran the encoder
    expect(dot(cheap!, full!)).toBeCloseTo(Math.sqrt(0.35) * dot(hashing!, hashing!), 5);
  });

  it('is absent when no part is costly', () => {
    expect(
      new FusedEmbedder([
        { embedder: new OfflineEmbedder(), weight: 1 },
        { embedder: new OfflineEmbedder({ dimensions: 64 }), weight: 1 },
      ]).embedLexical,
    ).toBeUndefined();
  });
});

describe('deferred ACUs', () => {
  it('a run that is behind indexes without the encoder; the next run that is not re-embeds them, and search then scores them as full vectors', async () => {
    const behind = await runExtraction(runtime.service.extraction, scope, 'defer');
    expect(behind.acusIndexed).toBeGreaterThan(0);
    expect(behind.acusDeferred).toBe(behind.acusIndexed);
    expect(behind.acusAwaitingEncoder).toBe(behind.acusIndexed);
    expect(encoder.texts).toEqual([]);
    const doc = await runtime.ports.documents.getHot(scope);
    expect(doc?.deferredAcus?.map((a) => a.text).sort()).toHaveLength(behind.acusIndexed);
    // Findable at once, by the hashing part.
    const found = await runtime.service.search(scope, 'what is the budget', { k: 5 });
    expect(found.results.map((r) => r.text).join(' ')).toMatch(/50 lakhs/);

    encoder.texts = []; // the search embedded its query in full
    // Nothing new to read: the next run that is not behind only re-embeds.
    const caughtUp = await runExtraction(runtime.service.extraction, scope, 'now');
    expect(caughtUp).toMatchObject({ ran: true, turnsRead: 0, acusUpgraded: behind.acusIndexed, acusAwaitingEncoder: 0 });
    expect(encoder.texts).toHaveLength(behind.acusIndexed);
    expect((await runtime.ports.documents.getHot(scope))?.deferredAcus).toBeUndefined();
    const deferredText = doc!.deferredAcus![0]!.text;
    const [full] = await fused.embed([deferredText]);
    const [hit] = await runtime.ports.acus.search(scope, full!, 1);
    expect(hit?.acu.text).toBe(deferredText);
    expect(hit?.score).toBeCloseTo(1, 4);
  });

  it('a run that is not behind re-embeds at most upgradeBatch of them; a flush re-embeds the rest', async () => {
    const behind = await runExtraction(runtime.service.extraction, scope, 'defer');
    expect(behind.acusIndexed).toBeGreaterThan(2);
    runtime.service.extraction.deferral.upgradeBatch = 2;
    const some = await runExtraction(runtime.service.extraction, scope, 'now');
    expect(some).toMatchObject({ acusUpgraded: 2, acusAwaitingEncoder: behind.acusIndexed - 2 });
    const flushed = await runtime.service.flush(scope);
    expect(flushed).toMatchObject({ acusUpgraded: behind.acusIndexed - 2, acusAwaitingEncoder: 0 });
  });

  it('past maxDeferred the oldest keep their hashing vector for good', async () => {
    runtime.service.extraction.deferral.maxDeferred = 2;
    const behind = await runExtraction(runtime.service.extraction, scope, 'defer');
    expect(behind.acusIndexed).toBeGreaterThan(2);
    expect(behind.acusAwaitingEncoder).toBe(2);
    expect((await runtime.ports.documents.getHot(scope))?.deferredAcus).toHaveLength(2);
  });

  it('a job that waited past deferAfterMs runs behind; the worker re-embeds once the queue is idle', async () => {
    expect(modeOfJob({ reason: 'threshold', requestedAt: 0 }, 5_000, { deferAfterMs: 3_000 })).toBe('defer');
    expect(modeOfJob({ reason: 'threshold', requestedAt: 4_000 }, 5_000, { deferAfterMs: 3_000 })).toBe('now');
    expect(modeOfJob({ reason: 'backlog', requestedAt: 5_000 }, 5_000, { deferAfterMs: 3_000 })).toBe('defer');
    expect(modeOfJob({ reason: 'backlog', requestedAt: 0 }, 5_000, { deferAfterMs: 0 })).toBe('now');

    const reports: Array<{ acusDeferred: number; acusUpgraded: number }> = [];
    runtime.ports.events.subscribe((e) => {
      if (e.type === 'extraction.finished') reports.push(e.data as { acusDeferred: number; acusUpgraded: number });
    });
    consumer = startExtractionWorker(runtime.ports.bus, runtime.service.extraction, runtime.config.worker);
    await runtime.ports.bus.publish({ scope, reason: 'threshold', requestedAt: Date.now() - 60_000 });
    await waitFor(() => reports.length >= 2, 10_000, 'the deferred run and the idle re-embedding');
    expect(reports[0]!.acusDeferred).toBeGreaterThan(0);
    expect(reports[1]!.acusUpgraded).toBe(reports[0]!.acusDeferred);
    expect((await runtime.ports.documents.getHot(scope))?.deferredAcus).toBeUndefined();
  });
});
