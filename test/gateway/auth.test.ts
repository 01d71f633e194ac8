import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, uniq, type TestServer } from './support/real-server.ts';
import { WsTester, http, type Reply } from './support/ws-tester.ts';

/** API keys, 401s, and tenant isolation on every route, op and topic. */
const KEY_A = 'key-a-' + uniq('k');
const KEY_B = 'key-b-' + uniq('k');
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ keys: { [KEY_A]: 'tenant-a', [KEY_B]: 'tenant-b' } });
});
afterAll(() => srv.close());

const as = (token: string | undefined, method: string, path: string, body?: unknown) => http(srv.base, method, path, { token, ...(body === undefined ? {} : { body }) });

describe('auth', () => {
  it('every HTTP route but /healthz needs a valid bearer key', async () => {
    expect((await as(undefined, 'GET', '/healthz')).status).toBe(200);
    const routes: Array<[string, string, unknown?]> = [
      ['POST', '/v1/sessions', { agentId: 'a', userId: 'u' }],
      ['POST', '/v1/sessions/s/turns', { role: 'user', text: 'x' }],
      ['POST', '/v1/search', { agentId: 'a', userId: 'u', query: 'x' }],
      ['POST', '/v1/agents/a/users/u/flush'],
      ['GET', '/v1/agents/a/users/u/entities?history=true'],
      ['PUT', '/v1/agents/a/schema', { fields: [] }],
      ['DELETE', '/v1/agents/a/users/u'],
      ['GET', '/metrics'],
    ];
    for (const [method, path, body] of routes) {
      const none = await as(undefined, method, path, body);
      expect(none, `${method} ${path}`).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
      expect((await as('wrong-key', method, path, body)).status, `${method} ${path}`).toBe(401);
    }
    expect((await as(KEY_A, 'POST', '/v1/sessions', { agentId: 'a', userId: 'u' })).status).toBe(200);
  });

  it('the WebSocket takes the key as a Bearer header or ?token=, and refuses the upgrade with 401 otherwise', async () => {
    await expect(WsTester.open(srv.wsUrl)).rejects.toMatchObject({ status: 401 });
    await expect(WsTester.open(srv.wsUrl, 'nope')).rejects.toMatchObject({ status: 401 });
    await expect(WsTester.open(`${srv.wsUrl}?token=nope`)).rejects.toMatchObject({ status: 401 });
    const byHeader = await WsTester.open(srv.wsUrl, KEY_A);
    const byQuery = await WsTester.open(`${srv.wsUrl}?token=${encodeURIComponent(KEY_B)}`);
    expect(await byHeader.request({ op: 'ping' })).toMatchObject({ op: 'pong' });
    expect(await byQuery.request({ op: 'ping' })).toMatchObject({ op: 'pong' });
    await byHeader.close();
    await byQuery.close();
  });
});

describe('tenant isolation', () => {
  it('a session id of tenant A is unknown to tenant B', async () => {
    const agentId = uniq('a');
    const userId = uniq('u');
    const sid = (await as(KEY_A, 'POST', '/v1/sessions', { agentId, userId })).body.sessionId as string;
    expect((await as(KEY_B, 'POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'intrusion' })).status).toBe(404);
    expect((await as(KEY_A, 'POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'mine' })).status).toBe(200);
  });

  it('the same agent and user ids are different people in different tenants, on every route and op', async () => {
    const agentId = uniq('a');
    const userId = uniq('u');
    const wsA = await WsTester.open(srv.wsUrl, KEY_A);
    await wsA.request({ op: 'start', agentId, userId });
    await wsA.request({ op: 'append', role: 'user', text: 'My name is Alice Moreau and I live in Lyon.', turnId: 'a-1' });
    expect((await as(KEY_A, 'POST', `/v1/agents/${agentId}/users/${userId}/flush`)).body.ran).toBe(true);
    await wsA.request({ op: 'append', role: 'user', text: 'Secret budget is 90 lakhs.', turnId: 'a-2' });

    // Tenant B sees nothing of it: entities, buffered turns, search, flush.
    expect((await as(KEY_B, 'GET', `/v1/agents/${agentId}/users/${userId}/entities?history=true`)).body.entities).toEqual([]);
    expect((await as(KEY_B, 'GET', `/v1/agents/${agentId}/users/${userId}/turns`)).body.turns).toEqual([]);
    expect((await as(KEY_B, 'POST', '/v1/search', { agentId, userId, query: 'budget Lyon Alice' })).body.results).toEqual([]);
    expect((await as(KEY_B, 'POST', `/v1/agents/${agentId}/users/${userId}/flush`)).body.ran).toBe(false);
    const wsB = await WsTester.open(srv.wsUrl, KEY_B);
    const ctxB = await wsB.request({ op: 'start', agentId, userId });
    expect(ctxB['recent']).toEqual([]);
    expect(ctxB['facts']).toEqual([]);
    expect((await wsB.request({ op: 'search', query: 'budget Lyon Alice' }))['results']).toEqual([]);
    // The same turnId in tenant B is a new turn, not a duplicate of A's.
    expect(await wsB.request({ op: 'append', role: 'user', text: 'hello', turnId: 'a-1' })).toMatchObject({ op: 'ack', seq: 1, duplicate: false });
    // B forgetting "the same" user leaves A's data alone.
    await as(KEY_B, 'DELETE', `/v1/agents/${agentId}/users/${userId}`);
    expect((await as(KEY_A, 'GET', `/v1/agents/${agentId}/users/${userId}/turns`)).body.turns.map((t: { turnId: string }) => t.turnId)).toContain('a-2');
    expect((await as(KEY_A, 'GET', `/v1/agents/${agentId}/users/${userId}/entities?history=true`)).body.entities.length).toBeGreaterThan(0);
    await wsA.close();
    await wsB.close();
  });

  it('event topics are per tenant: B never hears A, even on the same topic names', async () => {
    const agentId = uniq('a');
    const userId = uniq('u');
    const topics = ['events', `agent/${agentId}`, `user/${agentId}/${userId}`];
    const watchA = await WsTester.open(srv.wsUrl, KEY_A);
    const watchB = await WsTester.open(srv.wsUrl, KEY_B);
    await watchA.request({ op: 'subscribe', topics });
    await watchB.request({ op: 'subscribe', topics });
    const caller = await WsTester.open(srv.wsUrl, KEY_A);
    await caller.request({ op: 'start', agentId, userId });
    await caller.request({ op: 'append', role: 'user', text: 'hello', turnId: 'evt-1' });
    const isAppended = (r: Reply) => r['op'] === 'event' && (r['event'] as { type: string }).type === 'turn.appended';
    for (const topic of topics) await watchA.waitFor((r) => isAppended(r) && r['topic'] === topic);
    // A ping round trip after A's events arrived: anything B could have received has arrived too.
    await watchB.request({ op: 'ping' });
    expect(watchB.inbox.filter((r) => r['op'] === 'event')).toEqual([]);
    for (const ws of [watchA, watchB, caller]) await ws.close();
  });
});
