/**
 * `POST …/flush` means "extract that user now, wait for the commit": conversations over
 * HTTP against a gateway whose extractor is the OpenAI-compatible one, talking to the
 * local fake LLM with a delay, so a run is still in progress when the flush comes. On the
 * embedded default (SQLite file, extraction on its thread) and on Redis + NATS (the flush
 * takes the Redis user lock; the job runs on the NATS consumer).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MemgateEvent } from '../../src/ports/event-bus.ts';
import { startFakeOpenAI, type FakeChatBody, type FakeOpenAI } from '../support/fake-openai.ts';
import { startTestServer, uniq, type TestServer } from '../gateway/support/real-server.ts';
import { describeWithServer, natsUrl } from '../support/servers.ts';
import { removeDir } from '../support/tmp.ts';
import { waitFor } from '../support/wait.ts';

/** Budget facts for turns that mention lakhs; one ACU per turn of a segment. */
function scriptedModel(body: FakeChatBody): Record<string, unknown> {
  const prompt = body.messages.map((m) => m.content).join('\n');
  if (body.response_format?.json_schema?.name === 'extracted_facts') {
    const facts = [...prompt.matchAll(/\b(t-[\w-]+)\b[^\n]*?(\d+) lakhs/g)].map((m) => ({
      field: 'budget',
      qualifier: null,
      value: { amount: Number(m[2]) * 100_000, currency: 'INR' },
      source: 'explicit',
      validFrom: null,
      evidence: [m[1]],
    }));
    return { facts };
  }
  const ids = [...new Set([...prompt.matchAll(/\b(t-[\w-]+)/g)].map((m) => m[1]!))];
  // Each ACU about something else: texts that differed only in the (random) turn id were sometimes
  // near-duplicates to the hashing embedder (cosine >= 0.95), and one was suppressed.
  return { acus: ids.map((id, i) => ({ text: `Turn ${id} was about ${TOPICS[i % TOPICS.length]}.`, turnRefs: [id], validAt: null })) };
}

const TOPICS = ['the budget for the flat', 'a school nearby for the children', 'parking for two cars', 'the home loan from the bank', 'moving in next spring', 'the view from the balcony'];

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

function flushSuite(name: string, adapters: () => Record<string, unknown>): void {
  describe(name, () => {
    let fake: FakeOpenAI;
    let srv: TestServer;
    let short: TestServer | null = null;
    const dir = mkdtempSync(join(tmpdir(), 'memgate-flush-'));
    const events: MemgateEvent[] = [];
    const agentId = 'real-estate';

    const serverConfig = (flushDeadlineMs: number, db: string) => ({
      sqlite: { path: join(dir, db) },
      adapters: { extractor: 'openai', embedder: 'offline' },
      llm: { baseURL: fake.url, apiKey: 'test', model: 'fake', timeoutMs: 20_000, maxRetries: 0 },
      // Only `end` and flushes extract here; kept turns: the last two.
      memory: { tokenThreshold: 1_000_000, minKeptTurns: 2, maxKeptTurns: 2 },
      worker: { retryDelayMs: 100, flushDeadlineMs },
      ...adapters(),
    });

    beforeAll(async () => {
      fake = await startFakeOpenAI();
      srv = await startTestServer({ workers: true, config: serverConfig(30_000, 'main.db') });
      await srv.runtime.workersReady();
      srv.runtime.ports.events.subscribe((e) => events.push(e));
    });
    afterEach(() => {
      fake.delayMs = 0;
    });
    afterAll(async () => {
      await short?.close();
      await srv?.close();
      await fake?.close();
      removeDir(dir);
    });

    async function call(base: string, method: string, path: string, body?: unknown): Promise<Reply> {
      const res = await fetch(base + path, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    }

    /** A call of `texts` (agent and user alternating) for `userId`; returns its session id. */
    async function talk(base: string, userId: string, texts: string[], prefix: string): Promise<string> {
      const started = await call(base, 'POST', '/v1/sessions', { agentId, userId });
      expect(started.status).toBe(200);
      const sessionId = started.body['sessionId'] as string;
      for (const [i, text] of texts.entries()) {
        const ack = await call(base, 'POST', `/v1/sessions/${sessionId}/turns`, { role: i % 2 ? 'user' : 'agent', text, turnId: `t-${prefix}-${i}` });
        expect(ack.status).toBe(200);
      }
      return sessionId;
    }

    const flush = (base: string, userId: string) => call(base, 'POST', `/v1/agents/${agentId}/users/${userId}/flush`);
    const finished = (userId: string) => events.filter((e) => e.type === 'extraction.finished' && e.userId === userId);
    const started = (userId: string) => events.filter((e) => e.type === 'extraction.started' && e.userId === userId);
    const firstCall = ['What budget do you have in mind?', 'About 50 lakhs for a 2BHK.', 'Which area?', 'Indiranagar, near the metro.', 'Noted, I will send listings.', 'Thanks, bye.'];

    it('a flush during a slow extraction waits for it, extracts what was left, and answers 200 with both runs in its report', async () => {
      fake.onChat(scriptedModel);
      fake.delayMs = 1_500;
      const userId = uniq('during');
      const sessionId = await talk(srv.base, userId, firstCall, `${userId}-a`);
      expect((await call(srv.base, 'POST', `/v1/sessions/${sessionId}/end`)).status).toBe(200);
      await waitFor(() => started(userId).length === 1, 10_000, "the end's extraction to start");
      // Said while that run is in progress: only a second run can read it.
      await talk(srv.base, userId, ['Anything new?', 'Yes, my budget is now 70 lakhs.'], `${userId}-b`);

      const reply = await flush(srv.base, userId);
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ ran: true, turnsRead: 6 + 4, entitiesInserted: 2, entitiesSuperseded: 1, turnsLeft: 0 });
      expect(finished(userId)).toHaveLength(2);
      expect(reply.body['version']).toBe(finished(userId)[1]!.data['version']);
      const entities = await call(srv.base, 'GET', `/v1/agents/${agentId}/users/${userId}/entities`);
      expect((entities.body['entities'] as Array<{ value: { amount: number } }>).map((e) => e.value.amount)).toEqual([7_000_000]);
    }, 30_000);

    it('two concurrent flushes of a user share one run and one report', async () => {
      fake.onChat(scriptedModel);
      fake.delayMs = 800;
      const userId = uniq('shared');
      await talk(srv.base, userId, firstCall, `${userId}-a`);
      const chats = fake.chatRequests.length;
      const [a, b] = await Promise.all([flush(srv.base, userId), flush(srv.base, userId)]);
      expect(a.status).toBe(200);
      expect(b).toEqual(a);
      expect(a.body).toMatchObject({ ran: true, turnsRead: 6, entitiesInserted: 1 });
      expect(finished(userId)).toHaveLength(1);
      const oneRun = fake.chatRequests.length - chats;
      expect(oneRun).toBeGreaterThan(0);

      // Nothing new since: a flush answers at once from what is committed, and asks the model nothing.
      const again = await flush(srv.base, userId);
      expect(again).toMatchObject({ status: 200, body: { ran: false, skipped: 'up-to-date', factsExtracted: 0 } });
      expect(fake.chatRequests.length - chats).toBe(oneRun);
      expect(finished(userId)).toHaveLength(1);
    }, 30_000);

    it("a flush after end reports the end's run, and re-extracts nothing", async () => {
      fake.onChat(scriptedModel);
      fake.delayMs = 1_000;
      const userId = uniq('after-end');
      const sessionId = await talk(srv.base, userId, firstCall, `${userId}-a`);
      await call(srv.base, 'POST', `/v1/sessions/${sessionId}/end`);
      await waitFor(() => started(userId).length === 1, 10_000, "the end's extraction to start");
      const reply = await flush(srv.base, userId);
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ ran: true, turnsRead: 6, turnsArchived: 4, entitiesInserted: 1, acusIndexed: 4 });
      expect(reply.body['version']).toBe(finished(userId)[0]!.data['version']);
      // The flush's own run found everything read and started nothing: one run in all.
      expect(started(userId)).toHaveLength(1);
      expect(finished(userId)).toHaveLength(1);
      const chats = fake.chatRequests.length;
      const second = await flush(srv.base, userId);
      expect(second.body).toMatchObject({ ran: false, skipped: 'up-to-date' });
      expect(fake.chatRequests.length).toBe(chats);
      expect(started(userId)).toHaveLength(1);
    }, 30_000);

    it('answers unavailable (503) only once its deadline passed with the run still going; nothing is lost', async () => {
      short = await startTestServer({ workers: true, config: serverConfig(1_000, 'short.db') });
      await short.runtime.workersReady();
      const seen: MemgateEvent[] = [];
      short.runtime.ports.events.subscribe((e) => seen.push(e));
      fake.onChat(scriptedModel);
      fake.delayMs = 4_000;
      const userId = uniq('deadline');
      const sessionId = await talk(short.base, userId, firstCall, `${userId}-a`);
      await call(short.base, 'POST', `/v1/sessions/${sessionId}/end`);
      await waitFor(() => seen.some((e) => e.type === 'extraction.started' && e.userId === userId), 10_000, "the end's extraction to start");
      const t0 = Date.now();
      const reply = await flush(short.base, userId);
      expect(reply).toMatchObject({ status: 503, body: { error: { code: 'unavailable' } } });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1_000);
      await waitFor(() => seen.some((e) => e.type === 'extraction.finished' && e.userId === userId), 15_000, "the end's run to commit");
      const entities = await call(short.base, 'GET', `/v1/agents/${agentId}/users/${userId}/entities`);
      expect(entities.body['entities']).toHaveLength(1);
    }, 30_000);
  });
}

flushSuite('flush waits for a run in progress (embedded default: SQLite file, extraction thread)', () => ({}));

describeWithServer('redis', 'flush on Redis + NATS', (redis) => {
  const nats = natsUrl();
  if (!nats) {
    it.skip('needs MEMGATE_TEST_NATS_URL too', () => undefined);
    return;
  }
  const run = `flush${Date.now().toString(36)}`;
  flushSuite('flush waits for a run in progress (Redis user lock, NATS job bus)', () => ({
    adapters: { buffer: 'redis', cache: 'redis', lock: 'redis', bus: 'nats', events: 'nats', extractor: 'openai', embedder: 'offline' },
    redis: { url: redis, keyPrefix: `${run}:${Math.random().toString(36).slice(2, 6)}:` },
    nats: { servers: nats, stream: `${run.toUpperCase()}${Math.random().toString(36).slice(2, 6).toUpperCase()}`, subjectPrefix: `${run}${Math.random().toString(36).slice(2, 6)}` },
  }));
});
