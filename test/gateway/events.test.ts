import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, uniq, type TestServer } from './support/real-server.ts';
import { WsTester, http, type Reply } from './support/ws-tester.ts';

/** Live events over uWS pub/sub: call events from the gateway, extraction events from the pipeline. */
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.close());

const eventOf = (type: string, topic?: string) => (r: Reply) => r['op'] === 'event' && (r['event'] as { type: string }).type === type && (topic === undefined || r['topic'] === topic);

describe('live events', () => {
  it('a dashboard hears session, turn and extraction events of its topics, without user text', async () => {
    const agentId = uniq('a');
    const userId = uniq('u');
    const dash = await WsTester.open(srv.wsUrl);
    expect(await dash.request({ op: 'subscribe', topics: [`user/${agentId}/${userId}`] })).toMatchObject({ op: 'subscribed' });
    const binDash = await WsTester.open(srv.wsUrl);
    await binDash.request({ op: 'subscribe', topics: [`agent/${agentId}`] }, true);

    const caller = await WsTester.open(srv.wsUrl);
    const ctx = await caller.request({ op: 'start', agentId, userId });
    const started = await dash.waitFor(eventOf('session.started'));
    expect(started['event']).toMatchObject({ type: 'session.started', agentId, userId, sessionId: ctx['sessionId'], at: expect.any(Number) });

    await caller.request({ op: 'append', role: 'user', text: 'My name is Lena Park and I live in Seoul.', turnId: 'ev-1' });
    const appended = await dash.waitFor(eventOf('turn.appended'));
    // Numbered per subscription: session.started was 1 on this topic.
    expect(appended).toMatchObject({ topic: `user/${agentId}/${userId}`, seq: 2, event: { tenantId: 'default', agentId, userId, data: { turnId: 'ev-1', seq: 1, ackMs: expect.any(Number) } } });
    await caller.request({ op: 'append', role: 'user', text: 'My name is Lena Park and I live in Seoul.', turnId: 'ev-1' });
    expect(await dash.waitFor(eventOf('turn.duplicate'))).toMatchObject({ seq: 3, event: { data: { turnId: 'ev-1', seq: 1 } } });
    expect(JSON.stringify(appended)).not.toContain('Seoul');
    // The MessagePack subscriber gets the same event as a binary frame.
    expect(await binDash.waitFor(eventOf('turn.appended', `agent/${agentId}`))).toMatchObject({ _binary: true, event: { data: { turnId: 'ev-1' } } });

    const flushed = await http(srv.base, 'POST', `/v1/agents/${agentId}/users/${userId}/flush`);
    expect(flushed.body.ran).toBe(true);
    expect((await dash.waitFor(eventOf('extraction.started')))['event']).toMatchObject({ data: { turns: 1 } });
    const finished = await dash.waitFor(eventOf('extraction.finished'));
    expect(finished['event']).toMatchObject({ data: { ran: true, durationMs: expect.any(Number) } });
    await binDash.waitFor(eventOf('extraction.finished'));

    expect(await caller.request({ op: 'end' })).toMatchObject({ op: 'ended' });
    expect((await dash.waitFor(eventOf('session.ended')))['event']).toMatchObject({ sessionId: ctx['sessionId'] });

    const metrics = await http(srv.base, 'GET', '/metrics');
    expect(metrics.body).toMatch(/memgate_extraction_duration_seconds_count [1-9]/);
    for (const ws of [dash, binDash, caller]) await ws.close();
  });

  it('a subscriber of one user does not hear another user; `events` hears the whole tenant; unsubscribe stops delivery', async () => {
    const agentId = uniq('a');
    const dash = await WsTester.open(srv.wsUrl);
    await dash.request({ op: 'subscribe', topics: [`user/${agentId}/u1`] });
    const all = await WsTester.open(srv.wsUrl);
    await all.request({ op: 'subscribe', topics: ['events'] });
    const caller = await WsTester.open(srv.wsUrl);
    await caller.request({ op: 'start', agentId, userId: 'u2' });
    await caller.request({ op: 'append', role: 'user', text: 'hi', turnId: 'other-user' });
    await all.waitFor(eventOf('turn.appended', 'events'));
    await dash.request({ op: 'ping' });
    expect(dash.inbox.filter((r) => r['op'] === 'event')).toEqual([]);

    await all.request({ op: 'unsubscribe', topics: ['events'] });
    all.inbox.length = 0;
    await caller.request({ op: 'append', role: 'user', text: 'again', turnId: 'after-unsub' });
    await new Promise((r) => setImmediate(r));
    await all.request({ op: 'ping' });
    expect(all.inbox.filter((r) => r['op'] === 'event')).toEqual([]);
    for (const ws of [dash, all, caller]) await ws.close();
  });
});
