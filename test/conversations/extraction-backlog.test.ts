/**
 * When the extraction lane falls behind it says so: the backlog (turns acked that no
 * committed run has read, per user and in total, oldest age) in /v1/extraction and
 * /metrics, an `extraction.backlog` event when a user crosses the alert level and when
 * they are caught up again. Catching up coalesces: one run takes everything buffered up
 * to the run cap, and a run that left turns queues the next itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemgateEvent } from '../../src/ports/event-bus.ts';
import type { BacklogView } from '../../src/service/extraction-backlog.ts';
import { startTestServer, uniq, type TestServer } from '../gateway/support/real-server.ts';
import { waitFor } from '../support/wait.ts';

const THRESHOLD = 100;
let srv: TestServer;
const events: MemgateEvent[] = [];
const agentId = 'real-estate';

beforeAll(async () => {
  // Workers start later (second test): until then the lane is stopped and everything waits.
  srv = await startTestServer({ config: { memory: { tokenThreshold: THRESHOLD }, worker: { backlogAlertWindows: 3, maxRunWindows: 1, retryDelayMs: 50 } } });
  srv.runtime.ports.events.subscribe((e) => events.push(e));
});
afterAll(async () => {
  await srv?.close();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  const res = await fetch(srv.base + path, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, body: res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as Record<string, unknown>) : {}, text };
}

/** A call that says `turns` things of about 20 tokens each. */
async function talk(userId: string, turns: number): Promise<void> {
  const { body } = await call('POST', '/v1/sessions', { agentId, userId });
  const sessionId = body['sessionId'] as string;
  for (let i = 0; i < turns; i++) {
    const text = `Turn ${i}: we talked about the flat in Indiranagar, the budget of ${40 + i} lakhs and the site visit on Saturday.`;
    expect((await call('POST', `/v1/sessions/${sessionId}/turns`, { role: i % 2 ? 'user' : 'agent', text })).status).toBe(200);
  }
}

const backlog = async (): Promise<BacklogView> => (await call('GET', '/v1/extraction')).body['backlog'] as BacklogView;
const gauge = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
const crossings = (userId: string) => events.filter((e) => e.type === 'extraction.backlog' && e.userId === userId).map((e) => e.data['state']);

describe('extraction backlog', () => {
  it('is counted per user and in total, alerts once when a user falls behind, and a flush catches up in capped runs', async () => {
    const userId = uniq('behind');
    await talk(userId, 30);
    const before = await backlog();
    expect(before).toMatchObject({ users: 1, usersBehind: 1, turns: 30 });
    expect(before.maxWindows).toBeGreaterThan(5);
    expect(before.oldestAgeMs).toBeGreaterThanOrEqual(0);
    expect(before.byUser[0]).toMatchObject({ userId, turns: 30 });
    const metrics = (await call('GET', '/metrics')).text;
    expect(gauge(metrics, 'memgate_extraction_backlog_turns')).toBe(30);
    expect(gauge(metrics, 'memgate_extraction_backlog_users_behind')).toBe(1);
    await waitFor(() => crossings(userId).length === 1, 2_000, 'the behind event');
    expect(crossings(userId)).toEqual(['behind']);

    // One flush drains it all, in runs of at most one window of new turns each.
    const flushed = await call('POST', `/v1/agents/${agentId}/users/${userId}/flush`);
    expect(flushed.status).toBe(200);
    expect(flushed.body).toMatchObject({ ran: true, turnsLeft: 0 });
    const runs = events.filter((e) => e.type === 'extraction.finished' && e.userId === userId);
    expect(runs.length).toBeGreaterThan(3);
    for (const r of runs.slice(0, -1)) expect(r.data['turnsLeft']).toBeGreaterThan(0);
    expect(flushed.body['readThroughSeq']).toBe(30);
    expect(await backlog()).toMatchObject({ users: 0, turns: 0, tokens: 0 });
    expect(gauge((await call('GET', '/metrics')).text, 'memgate_extraction_backlog_turns')).toBe(0);
    expect(crossings(userId)).toEqual(['behind', 'caught-up']);
    const stages = (await call('GET', '/metrics')).text;
    expect(gauge(stages, 'memgate_extraction_plan_duration_seconds_count')).toBe(runs.length);
  });

  it('the lane coalesces: one queued job per user, and a capped run queues the next until nothing is left', async () => {
    const userId = uniq('coalesced');
    await talk(userId, 30);
    // Each threshold crossing published a job; the bus kept one per user.
    expect(await srv.runtime.ports.bus.depth()).toBeLessThanOrEqual(2);
    srv.runtime.startWorkers();
    await waitFor(async () => (await backlog()).turns === 0, 15_000, 'the lane to catch up');
    const runs = events.filter((e) => e.type === 'extraction.finished' && e.userId === userId);
    expect(runs.length).toBeGreaterThan(3);
    expect(runs.at(-1)!.data['turnsLeft']).toBe(0);
    expect((await srv.runtime.service.bufferedTurns({ tenantId: 'default', agentId, userId })).length).toBeLessThanOrEqual(srv.runtime.config.memory.maxKeptTurns);
    expect(crossings(userId)).toEqual(['behind', 'caught-up']);
  });
});
