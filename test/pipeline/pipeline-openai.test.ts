import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../support/config.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { Scope } from '../../src/core/types.ts';
import { createRuntime, type Runtime } from '../../src/app/wiring.ts';
import { startFakeOpenAI, type FakeChatBody, type FakeOpenAI } from '../support/fake-openai.ts';
import { gate } from '../support/wait.ts';

// The pipeline driven by the real `openai` client against a local fake over HTTP.
let fake: FakeOpenAI;
let runtime: Runtime;
const scope = (): Scope => ({ tenantId: 'acme', agentId: 'real-estate', userId: `u-${Math.random().toString(36).slice(2)}` });

/** Scripted model: budget facts for turns that mention lakhs, one ACU per turn of a segment. */
function scriptedModel(body: FakeChatBody): Record<string, unknown> {
  const prompt = body.messages.map((m) => m.content).join('\n');
  const ids = [...prompt.matchAll(/\b(t-[\w-]+)/g)].map((m) => m[1]!);
  if (body.response_format?.json_schema?.name === 'extracted_facts') {
    const facts = [];
    for (const m of prompt.matchAll(/\b(t-[\w-]+)\b[^\n]*?(\d+) lakhs/g)) {
      facts.push({ field: 'budget', qualifier: null, value: { amount: Number(m[2]) * 100_000, currency: 'INR' }, source: 'explicit', validFrom: null, evidence: [m[1]] });
    }
    return { facts };
  }
  return { acus: [...new Set(ids)].map((id) => ({ text: `Rajiv Kumar (user) said something memorable in turn ${id}.`, turnRefs: [id], validAt: null })) };
}

async function appendAll(s: Scope, texts: string[], prefix: string, startTs: number): Promise<void> {
  await runtime.service.startSession(s, `sess-${prefix}`);
  for (const [i, text] of texts.entries()) {
    await runtime.service.appendTurn(s, `sess-${prefix}`, { role: i % 2 ? 'user' : 'agent', text, turnId: `t-${prefix}-${i}`, ts: startTs + i * 5000 });
  }
}

beforeAll(async () => {
  fake = await startFakeOpenAI();
  runtime = await createRuntime(
    testConfig({
      sqlite: { path: ':memory:' },
      adapters: { extractor: 'openai' },
      llm: { baseURL: fake.url, apiKey: 'test', model: 'fake', timeoutMs: 400, maxRetries: 1 },
      memory: { minKeptTurns: 2, maxKeptTurns: 2 },
      log: { level: 'silent' },
    }),
    { logger: silentLogger },
  );
});
afterAll(async () => {
  await runtime.close();
  await fake.close();
});
afterEach(() => {
  fake.mode = null;
  fake.delayMs = 0;
  fake.onChat(null);
});

describe('extraction pipeline over an OpenAI-compatible endpoint', () => {
  it('commits scripted facts, supersedes a changed budget, indexes ACUs and archives the window', async () => {
    fake.onChat(scriptedModel);
    const s = scope();
    await appendAll(s, ['What is your budget?', 'My budget is 50 lakhs.', 'Noted.', 'Thanks', 'Bye', 'Bye'], 'a', Date.parse('2026-01-05T10:00:00Z'));
    const first = await runtime.service.flush(s);
    expect(first).toMatchObject({ ran: true, turnsRead: 6, turnsKept: 2, turnsArchived: 4, entitiesInserted: 1 });
    expect(first.acusIndexed).toBe(4);
    expect(await runtime.ports.cold.count(s)).toBe(4);
    expect((await runtime.service.bufferedTurns(s)).map((t) => t.turnId)).toEqual(['t-a-4', 't-a-5']);

    await appendAll(s, ['Any change?', 'I got approved for 80 lakhs.', 'Great', 'Bye'], 'b', Date.parse('2026-01-15T10:00:00Z'));
    const second = await runtime.service.flush(s);
    expect(second.entitiesSuperseded).toBe(1);
    const timeline = await runtime.service.timeline(s, true);
    const budgets = timeline.filter((e) => e.field === 'budget');
    expect(budgets.map((b) => [b.status, (b.value as { amount: number }).amount])).toEqual([
      ['superseded', 5_000_000],
      ['active', 8_000_000],
    ]);
    expect(budgets[0]!.validUntil).toBe(budgets[1]!.validFrom);
    expect(budgets[0]!.supersededBy).toBe(budgets[1]!.id);
    const ctx = await runtime.service.startSession(s);
    expect(ctx.facts.map((f) => f.field)).toEqual(['budget']);
    expect(ctx.contextBlock).not.toMatch(/50/);
  });

  it('keeps the window hot when the model returns garbage twice (job fails, nothing lost)', async () => {
    fake.mode = 'garbage';
    const s = scope();
    await appendAll(s, ['one', 'my budget is 50 lakhs', 'three', 'four', 'five'], 'g', Date.parse('2026-02-01T10:00:00Z'));
    await expect(runtime.service.flush(s)).rejects.toMatchObject({ retryable: true });
    expect(fake.chatRequests.length).toBeGreaterThanOrEqual(2);
    expect(await runtime.service.bufferedTurns(s)).toHaveLength(5);
    expect(await runtime.ports.cold.count(s)).toBe(0);
    expect(await runtime.service.timeline(s, true)).toEqual([]);
  });

  it('keeps the window hot when the model never answers (timeout)', async () => {
    fake.mode = 'hang';
    const s = scope();
    await appendAll(s, ['one', 'two', 'three', 'four'], 'h', Date.parse('2026-02-02T10:00:00Z'));
    await expect(runtime.service.flush(s)).rejects.toMatchObject({ retryable: true });
    expect(await runtime.service.bufferedTurns(s)).toHaveLength(4);
  });

  it('loses no turn appended while an extraction runs', async () => {
    // The model answers only once the late turns are in: the run is provably in flight while
    // they arrive, whatever the machine's load (no race between a delay and the appends).
    const inFlight = gate();
    const release = gate();
    fake.onChat(async (body) => {
      inFlight.open();
      await release.promise;
      return scriptedModel(body);
    });
    const s = scope();
    await appendAll(
      s,
      Array.from({ length: 10 }, (_, i) => `turn ${i} budget ${i + 40} lakhs`),
      'c',
      Date.parse('2026-03-01T10:00:00Z'),
    );
    const running = runtime.service.flush(s);
    await inFlight.promise;
    const during: string[] = [];
    for (let i = 0; i < 30; i++) {
      const ack = await runtime.service.appendTurn(s, 'sess-c', { role: 'user', text: `late turn ${i}`, turnId: `t-late-${i}` });
      during.push(ack.turnId);
    }
    release.open();
    const report = await running;
    // The run read the buffer once, before the model was asked: every late turn must still be buffered.
    expect(report.turnsRead).toBe(10);
    expect(report.turnsArchived).toBe(report.turnsRead - 2);
    const buffered = new Set((await runtime.service.bufferedTurns(s)).map((t) => t.turnId));
    for (const id of during) expect(buffered.has(id)).toBe(true);
    expect(buffered.size + (await runtime.ports.cold.count(s))).toBe(40);
  });
});
