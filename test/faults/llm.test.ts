import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeChatReply, type FakeOpenAI } from '../support/fake-openai.ts';
import { startTestServer, uniq, type TestServer } from '../gateway/support/real-server.ts';
import { WsTester } from '../gateway/support/ws-tester.ts';
import { waitFor } from '../support/wait.ts';
import { spread, writeFaultFigures } from './report.ts';

/**
 * LLM endpoint faults through the real `openai` client against the local fake:
 * while it fails, appends keep acking, extraction retries with backoff and then
 * dead-letters with a reason, and the turns stay buffered; once it heals, the
 * dead-letter sweeper drains the backlog without any new traffic.
 */
let fake: FakeOpenAI;
let srv: TestServer;
const MAX_DELIVER = 2;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  srv = await startTestServer({
    workers: true,
    config: {
      adapters: { extractor: 'openai' },
      llm: { baseURL: fake.url, timeoutMs: 1_500, maxRetries: 0 },
      worker: { maxDeliver: MAX_DELIVER, retryDelayMs: 100, deadLetterRetryMs: 400, deadLetterRetryMaxMs: 800 },
    },
  });
});
afterAll(async () => {
  await srv?.close();
  await fake?.close();
});

interface Fault {
  name: string;
  /** Break the endpoint. */
  apply(): void;
  /** Whether extraction should fail (and dead-letter) while the fault lasts. */
  fails: boolean;
}

const FAULTS: Fault[] = [
  { name: 'HTTP 500', apply: () => void (fake.mode = 'error500'), fails: true },
  { name: 'HTTP 429 with Retry-After', apply: () => fake.onChat(() => ({ status: 429, headers: { 'retry-after': '1' } })), fails: true },
  { name: 'no answer (timeout)', apply: () => void (fake.mode = 'hang'), fails: true },
  { name: 'invalid JSON body', apply: () => fake.onChat(() => ({ mode: 'truncated' }) as FakeChatReply), fails: true },
  { name: 'model output not JSON', apply: () => void (fake.mode = 'garbage'), fails: true },
  { name: 'JSON of the wrong shape', apply: () => fake.onChat(() => ({ content: { items: [] } })), fails: true },
  { name: 'replies taking 1 s', apply: () => void (fake.delayMs = 1_000), fails: false },
];

function heal(): void {
  fake.mode = null;
  fake.delayMs = 0;
  fake.onChat(null);
}

describe('fault: LLM endpoint', () => {
  it('every fault: appends keep acking, turns stay buffered, a healed endpoint drains the backlog unprompted', async () => {
    const ackMs: number[] = [];
    const drainMs: number[] = [];
    let lost = 0;
    for (const fault of FAULTS) {
      heal();
      const agentId = uniq('llm');
      const userId = uniq('u');
      const scope = { tenantId: 'default', agentId, userId };
      fault.apply();
      const before = fake.chatRequests.length;
      const ws = await WsTester.open(srv.wsUrl);
      await ws.request({ op: 'start', agentId, userId });
      for (let i = 0; i < 8; i++) {
        const t0 = performance.now();
        expect(await ws.request({ op: 'append', role: 'user', text: `My budget is ${50 + i} lakhs and I live in Pune.`, turnId: `t${i}` }), fault.name).toMatchObject({ op: 'ack' });
        ackMs.push(performance.now() - t0);
      }
      await ws.request({ op: 'end' });
      await ws.close();
      if (fault.fails) {
        // Every delivery failed: the job is dead-lettered (and swept back), the turns are all still buffered.
        await waitFor(() => fake.chatRequests.length - before >= MAX_DELIVER, 15_000, `${fault.name}: ${MAX_DELIVER} deliveries`);
        const doc = await srv.runtime.ports.documents.getHot(scope);
        expect(doc?.counters.extractions ?? 0, fault.name).toBe(0);
        const buffered = await srv.runtime.service.bufferedTurns(scope);
        expect(
          buffered.map((t) => t.turnId),
          fault.name,
        ).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6', 't7']);
      }
      const healedAt = performance.now();
      heal();
      await waitFor(async () => ((await srv.runtime.ports.documents.getHot(scope))?.counters.extractions ?? 0) >= 1, 20_000, `${fault.name}: committed after healing`);
      drainMs.push(performance.now() - healedAt);
      const doc = await srv.runtime.ports.documents.getHot(scope);
      const stillBuffered = new Set((await srv.runtime.service.bufferedTurns(scope)).map((t) => t.turnId));
      const kept = new Set((doc?.recent ?? []).map((t) => t.turnId));
      // Each turn is either kept hot, or archived after the commit; none vanished.
      const archived = doc?.counters.turnsArchived ?? 0;
      const accounted = [...Array(8).keys()].filter((i) => stillBuffered.has(`t${i}`) || kept.has(`t${i}`)).length + archived;
      if (accounted < 8) lost += 8 - accounted;
    }
    expect(lost).toBe(0);
    writeFaultFigures({
      suite: 'llm-faults',
      cases: FAULTS.length,
      failures: 0,
      turnsLost: lost,
      recovery: `backlog committed ${spread(drainMs)} after healing, with no new traffic`,
      notes: `${FAULTS.map((f) => f.name).join(', ')}; appends during the faults acked in ${spread(ackMs)}; ${MAX_DELIVER} deliveries then dead letter, swept back every 0.4–0.8 s in this test (30 s doubling to 5 min by default)`,
    });
  }, 180_000);
});
