import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, uniq, type TestServer } from './support/real-server.ts';
import { WsTester, http } from './support/ws-tester.ts';

/** The dashboard's read routes: tenant-scoped, authenticated, counted in /metrics. */
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ keys: { 'key-a': 'A', 'key-b': 'B' } });
});
afterAll(() => srv.close());

const until = async <T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 3000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe('dashboard routes', () => {
  it('calls, a call turn stream, the context as the agent gets it, the extraction lane; another tenant sees none of it', async () => {
    const agentId = uniq('a');
    const userId = uniq('u');
    const caller = await WsTester.open(srv.wsUrl, 'key-a');
    const ctx = await caller.request({ op: 'start', agentId, userId });
    const sessionId = ctx['sessionId'] as string;
    await caller.request({ op: 'append', role: 'user', text: 'My name is Asha and my budget is 50 lakhs.', turnId: 'd1', speaker: 'Asha', asrConfidence: 0.93 });
    await caller.request({ op: 'append', role: 'agent', text: 'Noted, 50 lakhs.', turnId: 'd2', interrupted: true });
    await caller.request({ op: 'append', role: 'user', text: 'My name is Asha and my budget is 50 lakhs.', turnId: 'd1' });

    const calls = await until(
      () => http(srv.base, 'GET', '/v1/calls', { token: 'key-a' }),
      (r) => r.body.calls?.some((c: any) => c.sessionId === sessionId && c.turns === 2 && c.duplicates === 1),
    );
    expect(calls.status).toBe(200);
    const call = calls.body.calls.find((c: any) => c.sessionId === sessionId);
    expect(call).toMatchObject({ agentId, userId, turns: 2, duplicates: 1, lastSeq: 2, endedAt: null });
    expect(calls.body.series.turnsPerSec).toHaveLength(60);
    expect(calls.body.lastMinute.turns).toBeGreaterThanOrEqual(2);
    expect(calls.body.lastMinute.ackP99Ms).toEqual(expect.any(Number));
    expect((await http(srv.base, 'GET', '/v1/calls', { token: 'key-b' })).body.calls).toEqual([]);

    const turns = await http(srv.base, 'GET', `/v1/sessions/${sessionId}/turns?afterSeq=1`, { token: 'key-a' });
    expect(turns.body).toMatchObject({ sessionId, agentId, userId });
    expect(turns.body.turns.map((t: any) => [t.seq, t.role, t.interrupted])).toEqual([[2, 'agent', true]]);
    const all = await http(srv.base, 'GET', `/v1/sessions/${sessionId}/turns`, { token: 'key-a' });
    expect(all.body.turns[0]).toMatchObject({ seq: 1, speaker: 'Asha', asrConfidence: 0.93 });
    expect((await http(srv.base, 'GET', `/v1/sessions/${sessionId}/turns`, { token: 'key-b' })).status).toBe(404);
    expect((await http(srv.base, 'GET', `/v1/sessions/${sessionId}/turns?afterSeq=-1`, { token: 'key-a' })).status).toBe(400);

    await caller.request({ op: 'end' });
    await http(srv.base, 'POST', `/v1/agents/${agentId}/users/${userId}/flush`, { token: 'key-a' });
    const context = await http(srv.base, 'GET', `/v1/agents/${agentId}/users/${userId}/context`, { token: 'key-a' });
    expect(context.status).toBe(200);
    expect(context.body.contextBlock).toContain('50 lakh');
    expect(context.body.contextTokens).toBeGreaterThan(0);
    // Reading the context starts no session.
    const fresh = await caller.request({ op: 'start', agentId, userId });
    expect(fresh['contextBlock']).toBe(context.body.contextBlock);
    expect((await http(srv.base, 'GET', `/v1/agents/${agentId}/users/${userId}/context`, { token: 'key-b' })).body.contextBlock).not.toContain('50 lakh');

    const lane = await until(
      () => http(srv.base, 'GET', '/v1/extraction?minutes=5', { token: 'key-a' }),
      (r) => r.body.counts?.committed >= 1,
    );
    expect(lane.body.counts).toMatchObject({ committed: expect.any(Number), failed: 0, deadLettered: 0 });
    expect(lane.body.recent[0]).toMatchObject({ agentId, userId, state: 'committed', durationMs: expect.any(Number) });
    expect(lane.body.windowLatencyMs.p50).toEqual(expect.any(Number));
    expect((await http(srv.base, 'GET', '/v1/extraction', { token: 'key-b' })).body.counts.committed).toBe(0);
    expect((await http(srv.base, 'GET', '/v1/extraction?minutes=x', { token: 'key-a' })).status).toBe(400);
    await caller.close();
  });

  it('health, and every read route refuses a wrong key; the dashboard page itself needs none and holds no data', async () => {
    const health = await http(srv.base, 'GET', '/v1/health', { token: 'key-a' });
    expect(health.body).toMatchObject({ status: 'ok', adapters: { buffer: 'sqlite' }, servers: [], extractionQueueReachable: true, memory: { rssBytes: expect.any(Number) } });
    for (const path of ['/v1/calls', '/v1/extraction', '/v1/health', '/v1/sessions/s1/turns', '/v1/agents/a/users/u/context']) {
      expect((await http(srv.base, 'GET', path, { token: 'wrong' })).status).toBe(401);
      expect((await http(srv.base, 'GET', path)).status).toBe(401);
    }
    const page = await http(srv.base, 'GET', '/dashboard');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect((await http(srv.base, 'GET', '/dashboard/vendor/uPlot.esm.js')).status).toBe(200);
    expect((await http(srv.base, 'GET', '/dashboard/../package.json')).status).toBe(404);
    expect((await http(srv.base, 'GET', '/dashboard/nope.js')).status).toBe(404);
    const metrics = await http(srv.base, 'GET', '/metrics', { token: 'key-a' });
    expect(metrics.body).toMatch(/memgate_http_requests_total\{status="401"\} [1-9]/);
  });
});
