import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, uniq, type TestServer } from './support/real-server.ts';
import { http } from './support/ws-tester.ts';

/** docs/protocol.md's HTTP routes over the real embedded runtime. */
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ config: { server: { maxTurnBytes: 2048, maxPayloadBytes: 16 * 1024 } } });
});
afterAll(() => srv.close());

const call = (method: string, path: string, body?: unknown) => http(srv.base, method, path, body === undefined ? {} : { body });

describe('HTTP routes', () => {
  it('GET /healthz → 200 {"status":"ok"}', async () => {
    expect(await call('GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('POST /v1/sessions starts a session with the context body; turns append to it by session id', async () => {
    const agentId = uniq('a');
    const userId = uniq('u');
    const start = await call('POST', '/v1/sessions', { agentId, userId });
    expect(start.status).toBe(200);
    expect(start.body).toMatchObject({ sessionId: expect.any(String), contextBlock: expect.any(String), tools: expect.any(Array) });
    expect(start.body).not.toHaveProperty('op');
    const sid = start.body.sessionId as string;
    const ack = await call('POST', `/v1/sessions/${encodeURIComponent(sid)}/turns`, { role: 'user', text: 'I live in Pune', turnId: 'h1' });
    expect(ack).toMatchObject({ status: 200, body: { turnId: 'h1', seq: 1, duplicate: false } });
    expect((await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'I live in Pune', turnId: 'h1' })).body).toMatchObject({ seq: 1, duplicate: true });
    expect((await call('POST', '/v1/sessions', { agentId, userId, sessionId: 'mine' })).body.sessionId).toBe('mine');
    const turns = await call('GET', `/v1/agents/${agentId}/users/${userId}/turns`);
    expect(turns.body.turns.map((t: { turnId: string }) => t.turnId)).toEqual(['h1']);
  });

  it('refuses bad turn appends: unknown session 404, invalid 400, text too large 413', async () => {
    expect(await call('POST', '/v1/sessions/nope/turns', { role: 'user', text: 'x' })).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
    const sid = (await call('POST', '/v1/sessions', { agentId: uniq('a'), userId: uniq('u') })).body.sessionId as string;
    expect(await call('POST', `/v1/sessions/${sid}/turns`, { role: 'bot', text: 'x' })).toMatchObject({
      status: 400,
      body: { error: { code: 'bad_request', message: expect.stringMatching(/role/) } },
    });
    expect(await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user' })).toMatchObject({ status: 400 });
    // A zero-width space or BOM alone is invisible: it would read as an empty line in the block.
    for (const text of ['', '   ', '\u200b', '\ufeff\u200d']) {
      expect(await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text })).toMatchObject({ status: 400, body: { error: { code: 'bad_request', message: expect.stringMatching(/empty/) } } });
    }
    // Nothing of the refused appends was kept: the call's first stored turn is still seq 1.
    expect(await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'hello' })).toMatchObject({ status: 200, body: { seq: 1 } });
    expect(await call('POST', `/v1/sessions/${sid}/turns`, [1])).toMatchObject({ status: 400 });
    expect(await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'x'.repeat(2049) })).toMatchObject({ status: 413, body: { error: { code: 'too_large' } } });
  });

  it('refuses turns after the session ended, as the WebSocket does (not_started)', async () => {
    const sid = (await call('POST', '/v1/sessions', { agentId: uniq('a'), userId: uniq('u') })).body.sessionId as string;
    expect((await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'before the end' })).status).toBe(200);
    expect((await call('POST', `/v1/sessions/${sid}/end`)).status).toBe(200);
    expect(await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'after the end' })).toMatchObject({ body: { error: { code: 'not_started' } } });
  });

  it("odd timestamps are refused at the edge and never wedge the user's extraction", async () => {
    const agentId = uniq('a');
    const userId = uniq('u');
    const sid = (await call('POST', '/v1/sessions', { agentId, userId })).body.sessionId as string;
    for (const ts of [1e300, 1e20, Number.MAX_SAFE_INTEGER, 8.64e15 + 1, '+275760-09-13T00:00:00.001Z']) {
      expect(await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'My budget is 50 lakhs', ts })).toMatchObject({
        status: 400,
        body: { error: { code: 'bad_request', message: expect.stringMatching(/ts/) } },
      });
    }
    expect((await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'My budget is 50 lakhs' })).status).toBe(200);
    expect((await call('POST', `/v1/agents/${agentId}/users/${userId}/flush`)).status).toBe(200);
  });

  it('refuses strings that are not valid Unicode in any field of a JSON body', async () => {
    const sid = (await call('POST', '/v1/sessions', { agentId: uniq('a'), userId: uniq('u') })).body.sessionId as string;
    const raw = `{"role":"user","text":"hi","turnId":"\\uD800x"}`;
    expect(await http(srv.base, 'POST', `/v1/sessions/${sid}/turns`, { raw })).toMatchObject({ status: 400, body: { error: { code: 'bad_request' } } });
  });

  it('refuses bodies that are not JSON (400) or too large (413)', async () => {
    expect(await http(srv.base, 'POST', '/v1/sessions', { raw: '{"agentId":' })).toMatchObject({ status: 400, body: { error: { code: 'bad_request' } } });
    expect(await http(srv.base, 'POST', '/v1/sessions', { raw: new Uint8Array([0x7b, 0xff, 0x7d]) })).toMatchObject({ status: 400 });
    expect(await http(srv.base, 'POST', '/v1/sessions', { raw: '' })).toMatchObject({ status: 400 });
    const big = await http(srv.base, 'POST', '/v1/sessions', { raw: JSON.stringify({ agentId: 'a', userId: 'u', pad: 'x'.repeat(20_000) }) });
    expect(big).toMatchObject({ status: 413, body: { error: { code: 'too_large' } } });
    expect((await call('GET', '/healthz')).status).toBe(200);
  });

  it('POST /v1/search returns results; validates its body', async () => {
    const r = await call('POST', '/v1/search', { agentId: uniq('a'), userId: uniq('u'), query: 'budget', k: 2 });
    expect(r).toMatchObject({ status: 200, body: { results: [], tookMs: expect.any(Number) } });
    expect(await call('POST', '/v1/search', { agentId: 'a', query: 'budget' })).toMatchObject({ status: 400, body: { error: { message: expect.stringMatching(/userId/) } } });
  });

  it('search scores come back rounded to 4 decimals', async () => {
    const agentId = uniq('a');
    const userId = uniq('u');
    const sid = (await call('POST', '/v1/sessions', { agentId, userId })).body.sessionId as string;
    for (const text of ['I want a 3 BHK in Koramangala.', 'My budget is around 95 lakhs.', 'We have two dogs and a cat.'])
      await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text, ts: '2026-01-05T10:00:00Z' });
    await call('POST', `/v1/sessions/${sid}/end`);
    await call('POST', `/v1/agents/${agentId}/users/${userId}/flush`);
    const r = await call('POST', '/v1/search', { agentId, userId, query: 'budget around 95 lakhs, two dogs', k: 5 });
    const scores = (r.body.results as Array<{ score: number }>).map((x) => x.score);
    expect(scores.length).toBeGreaterThan(0);
    for (const s of scores) expect(s).toBe(Math.round(s * 10_000) / 10_000);
  });

  it('flush runs extraction; entities shows active facts, and the full timeline with history=true', async () => {
    const agentId = uniq('a');
    const userId = uniq('u');
    const sid = (await call('POST', '/v1/sessions', { agentId, userId })).body.sessionId as string;
    await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'Hi, my name is Priya Shah and I live in Pune.', ts: '2026-01-05T10:00:00Z' });
    const first = await call('POST', `/v1/agents/${agentId}/users/${userId}/flush`);
    expect(first).toMatchObject({ status: 200, body: { ran: true, turnsRead: 1 } });
    await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'Update: I moved to Mumbai last week, I live in Mumbai now.', ts: '2026-02-05T10:00:00Z' });
    // A body on flush is ignored.
    expect((await call('POST', `/v1/agents/${agentId}/users/${userId}/flush`, {})).body).toMatchObject({ ran: true });
    const active = await call('GET', `/v1/agents/${agentId}/users/${userId}/entities`);
    const all = await call('GET', `/v1/agents/${agentId}/users/${userId}/entities?history=true`);
    expect(active.status).toBe(200);
    expect(all.body.entities.length).toBeGreaterThan(active.body.entities.length);
    const superseded = all.body.entities.filter((e: { status: string }) => e.status === 'superseded');
    expect(superseded.length).toBeGreaterThan(0);
    for (const k of ['id', 'key', 'field', 'value', 'category', 'status', 'source', 'validFrom', 'validUntil', 'recordedAt', 'expiresAt', 'supersedes', 'supersededBy', 'evidence'])
      expect(all.body.entities[0]).toHaveProperty(k);
  });

  it('PUT schema replaces the agent schema; an invalid one is 400 naming the bad field', async () => {
    const agentId = uniq('a');
    const ok = await call('PUT', `/v1/agents/${agentId}/schema`, { fields: [{ name: 'budget', category: 'temporal', type: 'money', description: 'Budget' }] });
    expect(ok.status).toBe(200);
    const bad = await call('PUT', `/v1/agents/${agentId}/schema`, { fields: [{ name: 'budget', category: 'sometimes', type: 'money', description: 'Budget' }] });
    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'bad_request', message: expect.stringMatching(/categor/) } } });
    expect((await http(srv.base, 'PUT', `/v1/agents/${agentId}/schema`, { raw: 'nope' })).status).toBe(400);
  });

  it('DELETE a user forgets their turns and timeline', async () => {
    const agentId = uniq('a');
    const userId = uniq('u');
    const sid = (await call('POST', '/v1/sessions', { agentId, userId })).body.sessionId as string;
    await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'My name is Omar Haddad.' });
    await call('POST', `/v1/agents/${agentId}/users/${userId}/flush`);
    await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'still buffered' });
    expect((await call('DELETE', `/v1/agents/${agentId}/users/${userId}`)).status).toBe(200);
    expect((await call('GET', `/v1/agents/${agentId}/users/${userId}/entities?history=true`)).body.entities).toEqual([]);
    expect((await call('GET', `/v1/agents/${agentId}/users/${userId}/turns`)).body.turns).toEqual([]);
  });

  it('GET /metrics exposes latency histograms, active calls and queue depth in Prometheus text', async () => {
    const m = await call('GET', '/metrics');
    expect(m.status).toBe(200);
    expect(m.headers.get('content-type')).toMatch(/^text\/plain/);
    for (const name of [
      'memgate_append_duration_seconds_count',
      'memgate_start_duration_seconds_bucket',
      'memgate_search_duration_seconds_sum',
      'memgate_active_calls',
      'memgate_extraction_queue_depth',
      'memgate_extraction_duration_seconds_count',
    ])
      expect(m.body).toContain(name);
  });

  it('unknown routes are 404', async () => {
    expect(await call('GET', '/v1/unknown')).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
  });
});
