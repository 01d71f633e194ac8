import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithServer } from './support/servers.ts';
import { startProductionTestServer, startTestServer, type TestServer } from './conversations/support.ts';
import { SCENARIOS } from './scenarios/catalog/index.ts';
import { KNOWN_GAPS } from './scenarios/known-gaps.ts';
import { runScenario, type Transport } from './scenarios/runner.ts';

/**
 * The scenario suite: scripted multi-call conversations in four domains, each
 * checking one memory rule in the timeline, the next call's context and
 * memory_search, on the embedded stack (offline extractor), over HTTP and
 * over the WebSocket (and with the fused embedder over HTTP), and on Redis + NATS (buffer, cache, lock, job bus and
 * events on the real servers, extraction by a worker) over HTTP. Every context block a scenario
 * produces (each call's start and the next call's) must pass src/memory/block-check.ts.
 */
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.close());

describe('scenarios', () => {
  it('cover at least 30 conversations across real estate, healthcare, rentals and support', () => {
    expect(SCENARIOS.length).toBeGreaterThanOrEqual(30);
    expect(new Set(SCENARIOS.map((s) => s.domain))).toEqual(new Set(['real-estate', 'healthcare', 'rentals', 'support']));
    expect(new Set(SCENARIOS.map((s) => s.id)).size).toBe(SCENARIOS.length);
    for (const id of Object.keys(KNOWN_GAPS))
      expect(
        SCENARIOS.some((s) => s.id === id),
        id,
      ).toBe(true);
  });

  describe.each<Transport>(['http', 'ws'])('over %s', (transport) => playAll(() => srv, transport));
});

// The product default embeds with the sentence encoder; the rules must hold there too.
describe('scenarios with the fused embedder (the product default)', () => {
  let fused: TestServer;
  beforeAll(async () => {
    fused = await startTestServer({ config: { adapters: { embedder: 'fused' } } });
  }, 60_000);
  afterAll(() => fused.close());
  describe('over http', () => playAll(() => fused, 'http'));
});

describeWithServer('redis', 'scenarios on Redis + NATS', (redisUrl) => {
  describeWithServer('nats', 'scenarios on Redis + NATS', (natsUrl) => {
    let prod: TestServer;
    beforeAll(async () => {
      prod = await startProductionTestServer(redisUrl, natsUrl, 'mgscn');
    });
    afterAll(() => prod.close());
    describe('over http', () => playAll(() => prod, 'http'));
  });
});

/** One test per scenario; a known gap must still fail, so a fix is noticed. */
function playAll(server: () => TestServer, transport: Transport): void {
  for (const s of SCENARIOS) {
    const gap = KNOWN_GAPS[s.id];
    it(`${s.domain}: ${s.id} (${s.rule})${gap ? ' [known gap]' : ''}`, async () => {
      const o = await runScenario(server(), s, transport);
      // The block checker holds for every scenario, known gap or not: a gap is about memory, not wording.
      expect(o.block).toEqual({ ok: true });
      const bad = (['timeline', 'context', 'search'] as const).flatMap((k) => (o[k] && !o[k]!.ok ? [(o[k] as { why: string }).why] : []));
      if (gap) expect(bad, `${s.id} now passes: remove it from known-gaps.ts`).not.toEqual([]);
      else expect(bad).toEqual([]);
    });
  }
}
