import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, type Runtime } from '../../src/app/wiring.ts';
import { testConfig } from '../support/config.ts';
import { createLogger } from '../../src/core/logger.ts';
import type { Scope } from '../../src/core/types.ts';
import { startGateway, type Gateway } from '../../src/gateway/server.ts';
import { uniq } from '../gateway/support/real-server.ts';
import { http } from '../gateway/support/ws-tester.ts';
import { describeWithServer } from '../support/servers.ts';

/**
 * Poisoned old data: turns written straight into the buffer (bypassing the
 * edge, as an older version or a damaged store would have) that extraction
 * cannot process. Before quarantine, a ts of 1e20 failed every flush of its
 * user with `500 internal: Invalid time value`, and the user's later turns
 * were never extracted.
 */
interface Env {
  runtime: Runtime;
  base: string;
  logLines: Array<Record<string, unknown>>;
}

/** The embedded runtime with `config` on top, and a gateway; log lines kept for assertions. */
function onRuntime(name: string, config: () => Record<string, unknown>, register: (title: string, fn: () => void) => void): void {
  register(name, () => {
    let gateway: Gateway;
    const env = { logLines: [] } as unknown as Env;
    beforeAll(async () => {
      const merged = testConfig({ sqlite: { path: ':memory:' }, log: { level: 'warn' }, ...config(), server: { port: 0 } });
      env.runtime = await createRuntime(merged, { logger: createLogger('warn', {}, (line) => env.logLines.push(JSON.parse(line) as Record<string, unknown>)) });
      gateway = await startGateway(env.runtime);
      env.base = `http://127.0.0.1:${gateway.port}`;
    });
    afterAll(async () => {
      await gateway?.close({ drainTimeoutMs: 2000 });
      await env.runtime?.close();
    });
    quarantineCases(env);
  });
}

onRuntime(
  'quarantine on the embedded default',
  () => ({}),
  (title, fn) => describe(title, fn),
);
describeWithServer('redis', 'quarantine on the Redis turn buffer', (url) => {
  const tag = randomBytes(4).toString('hex');
  onRuntime(
    'redis buffer, cache and lock',
    () => ({ adapters: { buffer: 'redis', cache: 'redis', lock: 'redis' }, redis: { url, keyPrefix: `mgq:${tag}:` } }),
    (title, fn) => describe(title, fn),
  );
});

function quarantineCases(env: Env): void {
  const call = (method: string, path: string, body?: unknown) => http(env.base, method, path, body === undefined ? {} : { body });

  /** Write a turn into the store as-is: no edge validation. */
  async function plant(scope: Scope, sessionId: string, turnId: string, fields: Record<string, unknown>): Promise<void> {
    const now = Date.now();
    const turn = { turnId, sessionId, role: 'user', text: 'My budget is 90 lakhs', ts: now, receivedAt: now, tokens: 6, ...fields };
    await env.runtime.ports.buffer.append(scope, sessionId, turn as never);
  }

  async function metric(name: string): Promise<number> {
    const text = await (await fetch(`${env.base}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(name + ' '));
    return Number(line?.split(' ')[1] ?? Number.NaN);
  }

  it('quarantines bad turns with their reason (route, log, metric) while later turns extract', async () => {
    const agentId = uniq('a');
    const userId = uniq('u');
    const scope = { tenantId: 'default', agentId, userId };
    const sid = (await call('POST', '/v1/sessions', { agentId, userId })).body.sessionId as string;
    await plant(scope, sid, 'poison-1', { ts: 1e20 });
    await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'Hi, my name is Priya Shah and I live in Pune.', ts: '2026-01-05T10:00:00Z' });

    const first = await call('POST', `/v1/agents/${agentId}/users/${userId}/flush`);
    expect(first, JSON.stringify(first.body)).toMatchObject({ status: 200, body: { ran: true, turnsRead: 1, turnsQuarantined: 1 } });
    const values = async () =>
      ((await call('GET', `/v1/agents/${agentId}/users/${userId}/entities`)).body.entities as Array<{ field: string; value: unknown }>).map((e) => `${e.field}=${String(e.value)}`);
    expect(await values()).toEqual(expect.arrayContaining(['location=Pune']));

    // Poison arrives again later (another shape of it); the turns around it still extract.
    await plant(scope, sid, 'poison-2', { ts: -1e18, role: 'robot' });
    await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'Update: I moved to Mumbai last week, I live in Mumbai now.', ts: '2026-02-05T10:00:00Z' });
    const second = await call('POST', `/v1/agents/${agentId}/users/${userId}/flush`);
    expect(second, JSON.stringify(second.body)).toMatchObject({ status: 200, body: { ran: true, turnsQuarantined: 1 } });
    expect(await values()).toEqual(expect.arrayContaining(['location=Mumbai']));

    const q = await call('GET', `/v1/agents/${agentId}/users/${userId}/quarantine`);
    expect(q.status).toBe(200);
    expect(q.body.quarantined).toEqual([
      {
        turnId: 'poison-1',
        reason: expect.stringMatching(/^ts 100000000000000000000 is not epoch milliseconds between 1970/),
        quarantinedAt: expect.any(String),
        turn: expect.objectContaining({ turnId: 'poison-1', ts: 1e20, text: 'My budget is 90 lakhs' }),
      },
      { turnId: 'poison-2', reason: 'role is not one of user, agent, system, tool', quarantinedAt: expect.any(String), turn: expect.objectContaining({ turnId: 'poison-2' }) },
    ]);
    const buffered = (await call('GET', `/v1/agents/${agentId}/users/${userId}/turns`)).body.turns as Array<{ turnId: string }>;
    expect(buffered.map((t) => t.turnId)).not.toContain('poison-1');
    expect(buffered.map((t) => t.turnId)).not.toContain('poison-2');
    expect(env.logLines.filter((l) => l['msg'] === 'turn quarantined' && l['userId'] === userId).map((l) => l['turnId'])).toEqual(['poison-1', 'poison-2']);
    expect(await metric('memgate_turns_quarantined_total')).toBeGreaterThanOrEqual(2);
    // The user's calls still start, and a re-sent poisoned id is not taken for a new turn.
    expect((await call('POST', '/v1/sessions', { agentId, userId })).status).toBe(200);
    expect((await call('POST', `/v1/agents/${agentId}/users/${userId}/flush`)).status).toBe(200);
  });

  it('a user whose only buffered turn is poisoned flushes cleanly and keeps a usable context', async () => {
    const agentId = uniq('a');
    const userId = uniq('u');
    const scope = { tenantId: 'default', agentId, userId };
    const sid = (await call('POST', '/v1/sessions', { agentId, userId })).body.sessionId as string;
    await plant(scope, sid, 'only-poison', { ts: Number.MAX_SAFE_INTEGER });
    // Before any extraction ran: a start that rebuilds the context and a search over buffered turns pass it by.
    await env.runtime.ports.cache.delete(scope);
    expect((await call('POST', '/v1/sessions', { agentId, userId })).status).toBe(200);
    expect((await call('POST', '/v1/search', { agentId, userId, query: 'budget lakhs' })).status).toBe(200);
    expect(await call('POST', `/v1/agents/${agentId}/users/${userId}/flush`)).toMatchObject({ status: 200, body: { ran: false, skipped: 'empty', turnsQuarantined: 1 } });
    expect((await call('GET', `/v1/agents/${agentId}/users/${userId}/quarantine`)).body.quarantined).toHaveLength(1);
    expect((await call('POST', '/v1/sessions', { agentId, userId })).status).toBe(200);
    await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'I live in Chennai.', ts: '2026-03-01T10:00:00Z' });
    expect(await call('POST', `/v1/agents/${agentId}/users/${userId}/flush`)).toMatchObject({ status: 200, body: { ran: true, turnsQuarantined: 0 } });
  });

  it('a defective turn an older version kept in the hot document does not fail the start, and leaves with its quarantine', async () => {
    const agentId = uniq('a');
    const userId = uniq('u');
    const scope = { tenantId: 'default', agentId, userId };
    const sid = (await call('POST', '/v1/sessions', { agentId, userId })).body.sessionId as string;
    // Kept by an earlier run that read up to it (seq 1); a later turn arrives after.
    await plant(scope, sid, 'kept-poison', { ts: 1e20 });
    await call('POST', `/v1/sessions/${sid}/turns`, { role: 'user', text: 'I live in Pune.', ts: '2026-01-05T10:00:00Z' });
    const kept = (await env.runtime.ports.buffer.list(scope)).find((t) => t.turnId === 'kept-poison')!;
    const doc = {
      scope,
      profile: {},
      entities: [],
      recent: [kept],
      summaries: [],
      counters: { extractions: 1, turnsArchived: 0, acusIndexed: 0, acusSuppressed: 0 },
      version: 1,
      updatedAt: new Date().toISOString(),
    };
    expect(await env.runtime.ports.documents.commitHot(doc, 0)).toBe(true);
    await env.runtime.ports.cache.delete(scope);
    expect((await call('POST', '/v1/sessions', { agentId, userId })).status).toBe(200);
    expect((await call('POST', '/v1/search', { agentId, userId, query: 'where do I live' })).status).toBe(200);
    expect(await call('POST', `/v1/agents/${agentId}/users/${userId}/flush`)).toMatchObject({ status: 200, body: { ran: true, turnsQuarantined: 1 } });
    expect((await env.runtime.ports.documents.getHot(scope))!.recent.map((t) => t.turnId)).not.toContain('kept-poison');
    expect((await call('GET', `/v1/agents/${agentId}/users/${userId}/quarantine`)).body.quarantined.map((q: { turnId: string }) => q.turnId)).toEqual(['kept-poison']);
  });
}
