import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemgateClient, MemgateError, type MemgateEvent } from '../../src/client/index.ts';
import { startTestServer, uniq, type TestServer } from '../gateway/support/real-server.ts';
import { TcpProxy } from './support/tcp-proxy.ts';

/** The TypeScript client against the real gateway, including reconnects through a faulty network. */
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.close());

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

for (const encoding of ['json', 'msgpack'] as const) {
  describe(`MemgateClient over ${encoding}`, () => {
    it('start, append, search, end with typed replies', async () => {
      const client = await MemgateClient.connect({ url: srv.base, encoding });
      const agentId = uniq('a');
      const userId = uniq('u');
      const ctx = await client.start({ agentId, userId });
      expect(ctx.sessionId).toBe(client.sessionId);
      expect(ctx.tools[0]?.function.name).toBe('memory_search');
      const ack = await client.append({ role: 'user', text: 'I work as a nurse.' });
      expect(ack).toEqual({ turnId: expect.any(String), seq: 1, duplicate: false });
      expect(await client.append({ role: 'user', text: 'I work as a nurse.', turnId: ack.turnId })).toEqual({ turnId: ack.turnId, seq: 1, duplicate: true });
      const found = await client.search('job', { k: 2 });
      expect(Array.isArray(found.results)).toBe(true);
      await client.end();
      expect(client.sessionId).toBeNull();
      await client.close();
    });

    it('rejects error replies as MemgateError with the code', async () => {
      const client = await MemgateClient.connect({ url: srv.wsUrl, encoding });
      await expect(client.append({ role: 'user', text: 'too early' })).rejects.toMatchObject({ code: 'not_started' });
      await client.start({ agentId: uniq('a'), userId: uniq('u') });
      const err = await client.append({ role: 'robot' as 'user', text: 'x' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MemgateError);
      expect(err).toMatchObject({ code: 'bad_request' });
      await client.close();
      await expect(client.append({ role: 'user', text: 'closed' })).rejects.toMatchObject({ code: 'unavailable' });
    });
  });
}

describe('reconnect', () => {
  it('restores the call and retries in-flight requests with the same ids: no turn is stored twice', async () => {
    const proxy = await TcpProxy.start(srv.gateway.port);
    const states: string[] = [];
    const client = await MemgateClient.connect({ url: `ws://127.0.0.1:${proxy.port}/v1/ws`, reconnect: { minDelayMs: 20, maxDelayMs: 100 }, onStateChange: (s) => states.push(s) });
    const agentId = uniq('a');
    const userId = uniq('u');
    const scope = { tenantId: 'default', agentId, userId };
    const ctx = await client.start({ agentId, userId });
    const events: MemgateEvent[] = [];
    await client.subscribe([`user/${agentId}/${userId}`], (e) => events.push(e));
    expect((await client.append({ role: 'user', text: 'one', turnId: 'r-1' })).seq).toBe(1);

    // The server stores these but the acks are lost on the way back.
    proxy.muteReplies = true;
    const lost2 = client.append({ role: 'user', text: 'two', turnId: 'r-2' });
    const lost3 = client.append({ role: 'agent', text: 'three' });
    await waitUntil(async () => (await srv.runtime.service.bufferedTurns(scope)).length === 3);
    proxy.dropAll();
    proxy.muteReplies = false;
    // Sent while the connection is down: queued, then sent after the session is restored.
    const queued = client.append({ role: 'user', text: 'four', turnId: 'r-4' });

    expect(await lost2).toEqual({ turnId: 'r-2', seq: 2, duplicate: true });
    expect(await lost3).toMatchObject({ seq: 3, duplicate: true });
    expect(await queued).toEqual({ turnId: 'r-4', seq: 4, duplicate: false });
    expect(client.sessionId).toBe(ctx.sessionId);
    expect(proxy.accepted).toBeGreaterThanOrEqual(2);
    expect(states).toContain('reconnecting');

    const turns = await srv.runtime.service.bufferedTurns(scope);
    expect(turns.map((t) => t.text)).toEqual(['one', 'two', 'three', 'four']);
    expect(new Set(turns.map((t) => t.sessionId))).toEqual(new Set([ctx.sessionId]));
    // The subscription came back with the connection.
    await waitUntil(async () => events.some((e) => e.type === 'turn.appended' && e.data['turnId'] === 'r-4'));
    await client.close();
    await proxy.close();
  });

  it('gives up with unavailable when reconnect is disabled', async () => {
    const proxy = await TcpProxy.start(srv.gateway.port);
    const client = await MemgateClient.connect({ url: `ws://127.0.0.1:${proxy.port}/v1/ws`, reconnect: false });
    await client.start({ agentId: uniq('a'), userId: uniq('u') });
    proxy.muteReplies = true;
    const pending = client.append({ role: 'user', text: 'x' });
    await new Promise((r) => setTimeout(r, 20));
    proxy.dropAll();
    await expect(pending).rejects.toMatchObject({ code: 'unavailable' });
    await client.close();
    await proxy.close();
  });

  it('connect to a server that accepts TCP but never answers the upgrade rejects with unavailable after requestTimeoutMs', async () => {
    const sockets = new Set<Socket>();
    const hung = createServer((s) => void sockets.add(s));
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    try {
      await expect(MemgateClient.connect({ url: `http://127.0.0.1:${(hung.address() as AddressInfo).port}`, requestTimeoutMs: 200 })).rejects.toMatchObject({
        code: 'unavailable',
        message: expect.stringContaining('no WebSocket handshake'),
      });
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => hung.close(r));
    }
  });
});

describe('auth', () => {
  it('connect rejects with unauthorized for a missing or wrong key, and works with the right one', async () => {
    const keyed = await startTestServer({ keys: { 'right-key': 'tenant-x' } });
    try {
      await expect(MemgateClient.connect({ url: keyed.wsUrl })).rejects.toMatchObject({ code: 'unauthorized' });
      await expect(MemgateClient.connect({ url: keyed.wsUrl, token: 'wrong' })).rejects.toMatchObject({ code: 'unauthorized' });
      const client = await MemgateClient.connect({ url: keyed.wsUrl, token: 'right-key' });
      await client.start({ agentId: 'a', userId: 'u' });
      expect((await client.append({ role: 'user', text: 'hi' })).seq).toBe(1);
      await client.close();
    } finally {
      await keyed.close();
    }
  });
});
