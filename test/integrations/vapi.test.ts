import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../gateway/support/real-server.ts';
import { http } from '../gateway/support/ws-tester.ts';
import { waitFor } from '../support/wait.ts';

/**
 * The Vapi-style server URL, fed the sample messages of test/fixtures/vapi (shaped
 * as Vapi documents them): context at call start, final transcripts stored once,
 * the end-of-call report fills what was missed and ends the call.
 */
const KEY = 'vapi-key';
let srv: TestServer;
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/vapi/${name}.json`, import.meta.url), 'utf8')) as Record<string, any>;
const post = (body: unknown, headers: Record<string, string> = { authorization: `Bearer ${KEY}` }, query = '?agentId=estate&assistantId=asst-estate') =>
  http(srv.base, 'POST', `/v1/integrations/vapi${query}`, { body, headers });
const scope = { agentId: 'estate', userId: '+919800000001' };

beforeAll(async () => {
  srv = await startTestServer({ keys: { [KEY]: 'acme' } });
  const schema = JSON.parse(readFileSync(new URL('../../config/schemas/real-estate.json', import.meta.url), 'utf8')) as unknown;
  const r = await http(srv.base, 'PUT', '/v1/agents/estate/schema', { body: schema, headers: { authorization: `Bearer ${KEY}` } });
  expect(r.status).toBe(200);
});
afterAll(() => srv.close());

describe('POST /v1/integrations/vapi', () => {
  it('refuses a request without the tenant key (Authorization or X-Vapi-Secret)', async () => {
    expect((await post(fixture('assistant-request'), {})).status).toBe(401);
    expect((await post(fixture('assistant-request'), { 'x-vapi-secret': 'nope' })).status).toBe(401);
    expect((await post(fixture('assistant-request'), { 'x-vapi-secret': KEY })).status).toBe(200);
    expect(await post({ hello: 'world' })).toMatchObject({ status: 400, body: { error: { code: 'bad_request' } } });
  });

  it('a whole call: context at start, final transcripts once, the report adds what was missed and ends the call; the next call knows', async () => {
    const start = await post(fixture('assistant-request'));
    expect(start).toMatchObject({ status: 200, body: { assistantId: 'asst-estate', assistantOverrides: { variableValues: { memgateContext: expect.stringContaining('Memory of this user') } } } });

    expect((await post(fixture('transcript-user-partial'))).body).toEqual({ stored: false });
    const user = await post(fixture('transcript-user-final'));
    expect(user.body).toMatchObject({ stored: true, seq: 1, duplicate: false });
    // Vapi may deliver a webhook twice: the same message is stored once.
    expect((await post(fixture('transcript-user-final'))).body).toMatchObject({ stored: true, seq: 1, duplicate: true });
    expect((await post(fixture('transcript-assistant-final'))).body).toMatchObject({ stored: true, seq: 2 });
    expect((await post(fixture('status-update'))).body).toEqual({ ignored: 'status-update' });

    // The report carries the greeting and the last user turn the live messages missed; the system prompt is not a turn.
    const report = await post(fixture('end-of-call-report'));
    expect(report.body).toEqual({ ended: true, turnsAdded: 2 });
    const turns = (await http(srv.base, 'GET', `/v1/agents/${scope.agentId}/users/${encodeURIComponent(scope.userId)}/turns`, { headers: { authorization: `Bearer ${KEY}` } })).body.turns as Array<{
      role: string;
      text: string;
    }>;
    expect(turns.map((t) => `${t.role}: ${t.text}`).sort()).toEqual(
      [
        'agent: Congratulations! Shall I look for flats up to 80 lakhs?',
        'agent: Hello! How can I help you today?',
        'user: My budget is 80 lakhs now, the bank approved it.',
        'user: Yes, and I want a 3 BHK near Baner.',
      ].sort(),
    );
    // A report delivered twice adds nothing.
    expect((await post(fixture('end-of-call-report'))).body).toEqual({ ended: true, turnsAdded: 0 });

    await http(srv.base, 'POST', `/v1/agents/${scope.agentId}/users/${encodeURIComponent(scope.userId)}/flush`, { headers: { authorization: `Bearer ${KEY}` } });
    const next = fixture('assistant-request');
    next['message']['call']['id'] = 'call-8b1c';
    const ctx = (await post(next)).body.assistantOverrides.variableValues.memgateContext as string;
    expect(ctx).toContain('80 lakh');
    expect(ctx).toMatch(/bedrooms|3 BHK|3\b/);
  });

  it('shows a Vapi call live like any other: its start, turns and end reach the calls view and the append histogram', async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    const appendCount = async () => Number(/memgate_append_duration_seconds_count (\d+)/.exec(String((await http(srv.base, 'GET', '/metrics', { headers: auth })).body))?.[1] ?? 0);
    const before = await appendCount();
    const call = (type: string) => {
      const m = fixture(type);
      m['message']['call']['id'] = 'call-live-1';
      return m;
    };
    await post(call('assistant-request'));
    await waitFor(
      async () => ((await http(srv.base, 'GET', '/v1/calls', { headers: auth })).body.calls as Array<{ sessionId: string }>).some((c) => c.sessionId === 'vapi-call-live-1'),
      5_000,
      'the Vapi call among the live calls',
    );
    expect((await post(call('transcript-user-final'))).body).toMatchObject({ stored: true, duplicate: false });
    await post(call('end-of-call-report'));
    await waitFor(
      async () =>
        ((await http(srv.base, 'GET', '/v1/calls', { headers: auth })).body.ended as Array<{ sessionId: string; turns: number; endReason?: string }>).some(
          (c) => c.sessionId === 'vapi-call-live-1' && c.turns >= 2 && c.endReason === 'end',
        ),
      5_000,
      'the Vapi call ended, with its turns, in the calls view',
    );
    expect(await appendCount()).toBeGreaterThanOrEqual(before + 2);
  });
});
