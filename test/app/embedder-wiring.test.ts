/**
 * MEMGATE_EMBEDDER=use-lite / fused wired end to end: the extraction thread embeds
 * ACUs with the model the gateway lends it (the process's one embed thread: one copy of
 * the weights), the gateway embeds queries on that thread too, and the SQLite index
 * holds and searches vectors of the embedder's size.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/config-schema.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { Scope } from '../../src/core/types.ts';
import { useLiteThreadRunning } from '../../src/adapters/use-lite/index.ts';
import { waitFor } from '../support/wait.ts';
import { createRuntime } from '../../src/app/wiring.ts';
import { rid } from '../support/fixtures.ts';
import { REPO_ROOT } from '../support/processes.ts';
import { removeDir } from '../support/tmp.ts';

const example = JSON.parse(readFileSync(join(REPO_ROOT, 'config/examples/real-estate-calls.json'), 'utf8')) as { calls: Array<{ turns: Array<{ role: 'user' | 'agent'; text: string }> }> };
const dir = mkdtempSync(join(tmpdir(), 'memgate-embedders-'));
afterAll(() => removeDir(dir));

describe.each([
  ['offline', 384, 'offline-hash-v1'],
  ['use-lite', 512, 'use-lite-v1'],
  ['fused', 896, 'fused(offline-hash-v1*0.35+use-lite-v1*0.65)'],
  ['static', 256, 'use-static-v1-256'],
  ['static-fused', 640, 'fused(offline-hash-v1*0.5+use-static-v1-256*0.5)'],
] as const)('MEMGATE_EMBEDDER=%s', (embedder, dims, id) => {
  it('indexes ACUs of the embedder size from the extraction thread and finds them by meaning', { timeout: 90_000 }, async () => {
    const config = defaultConfig({ sqlite: { path: join(dir, `${rid('db-')}.db`) }, log: { level: 'silent' }, adapters: { embedder } });
    const runtime = await createRuntime(config, { logger: silentLogger });
    try {
      runtime.startWorkers();
      expect([runtime.ports.embedder.id, runtime.ports.embedder.dimensions]).toEqual([id, dims]);
      const scope: Scope = { tenantId: rid('t-'), agentId: 'real-estate', userId: rid('u-') };
      const { sessionId } = await runtime.service.startSession(scope);
      for (const call of example.calls.slice(0, 2)) for (const t of call.turns) await runtime.service.appendTurn(scope, sessionId, { role: t.role, text: t.text });
      const flushed = await runtime.service.flush(scope);
      expect(flushed).toMatchObject({ ran: true });
      expect(flushed.acusIndexed).toBeGreaterThan(0);
      const [q] = await runtime.ports.embedder.embed(['home loan']);
      const hits = await runtime.ports.acus.search(scope, q!, 3);
      expect(hits.length).toBeGreaterThan(0);
      expect(hits[0]!.acu.embedding).toHaveLength(dims);
      const reply = await runtime.service.search(scope, 'Which bank is the home loan with?');
      expect(reply.results.map((r) => r.text).join(' ')).toMatch(/HDFC|loan/i);
      // Model-backed embedders borrow the gateway's encoder; the others never ask for one.
      const lent = runtime.extractionThread()?.textsEncoded ?? 0;
      if (embedder === 'use-lite' || embedder === 'fused') expect(lent).toBeGreaterThanOrEqual(flushed.acusIndexed);
      else expect(lent).toBe(0);
    } finally {
      await runtime.close();
    }
  });
});

it('the embedded default is fused, with the sentence encoder at 0.65 of the cosine', () => {
  expect(defaultConfig().adapters.embedder).toBe('fused');
  expect(defaultConfig().embeddings.fusedSemanticShare).toBe(0.65);
});

it('static-fused takes its share from embeddings.staticFusedShare, and the static sizes are fixed', async () => {
  const runtime = await createRuntime(defaultConfig({ sqlite: { path: ':memory:' }, log: { level: 'silent' }, adapters: { embedder: 'static-fused' }, embeddings: { staticFusedShare: 0.35 } }), {
    logger: silentLogger,
  });
  try {
    expect(runtime.ports.embedder.id).toBe('fused(offline-hash-v1*0.65+use-static-v1-256*0.35)');
  } finally {
    await runtime.close();
  }
  expect(() => defaultConfig({ adapters: { embedder: 'static' }, embeddings: { dimensions: 384 } })).toThrow(/256-d/);
  expect(() => defaultConfig({ adapters: { embedder: 'static-fused' }, embeddings: { staticFusedShare: 1 } })).toThrow();
});

describe('MEMGATE_EMBEDDER=fused on the gateway thread', () => {
  it('embeds queries on the embed thread: a search deadline fires while the model is busy, and close() stops the thread', { timeout: 90_000 }, async () => {
    const config = defaultConfig({ sqlite: { path: join(dir, `${rid('db-')}.db`) }, log: { level: 'silent' }, adapters: { embedder: 'fused' } });
    const runtime = await createRuntime(config, { logger: silentLogger });
    try {
      const scope: Scope = { tenantId: rid('t-'), agentId: 'real-estate', userId: rid('u-') };
      await runtime.ports.embedder.embed(['warm up']);
      expect(useLiteThreadRunning()).toBe(true);
      // A long batch occupies the thread; the query queues behind it while this loop stays free.
      let busyDone = false;
      const busy = runtime.ports.embedder.embed(Array.from({ length: 64 }, (_, i) => `${example.calls[0]!.turns[i % 4]!.text} (${i})`)).then(() => (busyDone = true));
      const reply = await runtime.service.search(scope, 'Which bank is the home loan with?', { deadlineMs: 5 });
      expect(reply.partial).toBe(true);
      // In process the batch would have run to its end before the search could even start.
      expect(busyDone).toBe(false);
      await busy;
    } finally {
      await runtime.close();
    }
    expect(useLiteThreadRunning()).toBe(false);
  });

  it('loads the model when the runtime starts, before any call needs it', { timeout: 90_000 }, async () => {
    const runtime = await createRuntime(defaultConfig({ sqlite: { path: ':memory:' }, log: { level: 'silent' } }), { logger: silentLogger });
    try {
      await waitFor(() => useLiteThreadRunning(), 30_000, 'the embed thread started by the warm-up');
    } finally {
      await runtime.close();
    }
    expect(useLiteThreadRunning()).toBe(false);
  });
});
