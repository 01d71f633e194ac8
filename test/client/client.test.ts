import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemgateClient, MemgateError, type MemgateEvent, type SocketFactory } from '../../src/client/index.ts';
import { nodeSocket } from '../../src/client/node-socket.ts';
import { startGateway } from '../../src/gateway/server.ts';
import { startTestServer, uniq, type TestServer } from '../gateway/support/real-server.ts';
import { http } from '../gateway/support/ws-tester.ts';
import { TEST_EMBEDDER } from '../support/config.ts';
import { closedPort } from '../support/net.ts';
import { removeDir } from '../support/tmp.ts';
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

describe('reconnect across gateways and restarts', () => {
  /** The node socket, recording the close code of every connection. */
  const recording =
    (codes: number[]): SocketFactory =>
    (url, token, h) =>
      nodeSocket(url, token, { ...h, close: (code) => (codes.push(code), h.close(code)) });

  it('a draining gateway closes with 1001: the client moves to the next URL, reopens the call and re-sends unacked turns, stored once', async () => {
    const a = await startTestServer();
    const b = await startGateway(a.runtime);
    const proxy = await TcpProxy.start(a.gateway.port);
    const codes: number[] = [];
    const client = await MemgateClient.connect({
      url: [`ws://127.0.0.1:${proxy.port}/v1/ws`, `http://127.0.0.1:${b.port}`],
      reconnect: { minDelayMs: 20, maxDelayMs: 100 },
      socket: recording(codes),
    });
    try {
      const agentId = uniq('a');
      const userId = uniq('u');
      const scope = { tenantId: 'default', agentId, userId };
      const ctx = await client.start({ agentId, userId });
      expect((await client.append({ role: 'user', text: 'one', turnId: 'g-1' })).seq).toBe(1);
      // Stored, but the acks never reach the client.
      proxy.muteReplies = true;
      const unacked = [client.append({ role: 'user', text: 'two', turnId: 'g-2' }), client.append({ role: 'agent', text: 'three', turnId: 'g-3' })];
      await waitUntil(async () => (await a.runtime.service.bufferedTurns(scope)).length === 3);
      proxy.muteReplies = false;
      // Gateway A drains: its sockets close with 1001 and it refuses new ones.
      await a.gateway.close({ drainTimeoutMs: 1000 });
      const later = client.append({ role: 'user', text: 'four', turnId: 'g-4' });

      expect(await Promise.all(unacked)).toEqual([
        { turnId: 'g-2', seq: 2, duplicate: true },
        { turnId: 'g-3', seq: 3, duplicate: true },
      ]);
      expect(await later).toEqual({ turnId: 'g-4', seq: 4, duplicate: false });
      expect(codes[0]).toBe(1001);
      expect(client.sessionId).toBe(ctx.sessionId);
      const turns = await a.runtime.service.bufferedTurns(scope);
      expect(turns.map((t) => [t.turnId, t.sessionId])).toEqual(['g-1', 'g-2', 'g-3', 'g-4'].map((id) => [id, ctx.sessionId]));
      // The drain ended the call; the client's reconnect reopened it.
      expect((await a.runtime.service.session('default', ctx.sessionId))?.endedAt).toBeNull();
    } finally {
      await client.close();
      await proxy.close();
      await b.close({ drainTimeoutMs: 1000 });
      await a.close();
    }
  });

  it('a killed server (1006): the client reconnects to its restart, reopens the call and re-sends the unacked turn, stored once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'memgate-client-kill-'));
    // Nothing listens there now; the server and its restart take it.
    const port = await closedPort();
    const db = join(dir, 'memgate.db');
    let server = await serve(port, db);
    const proxy = await TcpProxy.start(port);
    const codes: number[] = [];
    const client = await MemgateClient.connect({ url: `ws://127.0.0.1:${proxy.port}/v1/ws`, reconnect: { minDelayMs: 50, maxDelayMs: 200 }, socket: recording(codes) });
    try {
      const agentId = uniq('a');
      const userId = uniq('u');
      const turnsOf = async () => (await http(`http://127.0.0.1:${port}`, 'GET', `/v1/agents/${agentId}/users/${userId}/turns`)).body.turns as Array<{ turnId: string; seq: number }>;
      const ctx = await client.start({ agentId, userId });
      expect((await client.append({ role: 'user', text: 'My name is Nikhil Rao.', turnId: 'k-1' })).seq).toBe(1);
      proxy.muteReplies = true;
      const unacked = client.append({ role: 'user', text: 'I live in Kochi.', turnId: 'k-2' });
      await waitUntil(async () => (await turnsOf()).length === 2);
      server.child.kill('SIGKILL');
      await server.exited;
      proxy.muteReplies = false;
      server = await serve(port, db);

      expect(await unacked).toEqual({ turnId: 'k-2', seq: 2, duplicate: true });
      expect(await client.append({ role: 'user', text: 'I work as a chef.', turnId: 'k-3' })).toEqual({ turnId: 'k-3', seq: 3, duplicate: false });
      expect(codes[0]).toBe(1006);
      expect(client.sessionId).toBe(ctx.sessionId);
      expect((await turnsOf()).map((t) => [t.turnId, t.seq])).toEqual([
        ['k-1', 1],
        ['k-2', 2],
        ['k-3', 3],
      ]);
    } finally {
      await client.close();
      await proxy.close();
      server.child.kill('SIGTERM');
      await server.exited;
      removeDir(dir);
    }
  }, 60_000);

  it('a session id held by another user is not retried: the restore is refused with conflict and the client gives up', async () => {
    const proxy = await TcpProxy.start(srv.gateway.port);
    const states: string[] = [];
    const client = await MemgateClient.connect({ url: `ws://127.0.0.1:${proxy.port}/v1/ws`, reconnect: { minDelayMs: 20, maxDelayMs: 50 }, onStateChange: (s) => states.push(s) });
    const agentId = uniq('a');
    const sessionId = uniq('s');
    await client.start({ agentId, userId: uniq('u'), sessionId });
    // While the line is down, the call's record goes (a forget) and another user takes the id.
    proxy.muteReplies = true;
    const pending = client.append({ role: 'user', text: 'x', turnId: 'c-1' });
    await new Promise((r) => setTimeout(r, 20));
    const owner = (await srv.runtime.service.session('default', sessionId))!.scope;
    await srv.runtime.service.forget(owner);
    await srv.runtime.service.startSession({ tenantId: 'default', agentId, userId: uniq('other') }, sessionId);
    proxy.muteReplies = false;
    proxy.dropAll();
    await expect(pending).rejects.toMatchObject({ code: 'conflict' });
    expect(states.at(-1)).toBe('closed');
    const accepted = proxy.accepted;
    await new Promise((r) => setTimeout(r, 200));
    expect(proxy.accepted).toBe(accepted);
    await client.close();
    await proxy.close();
  });
});

/** `memgate serve` (the build, bin/memgate.mjs) as its own process on `port` over the SQLite file `db`. */
async function serve(port: number, db: string): Promise<{ child: ChildProcess; exited: Promise<unknown> }> {
  const env: NodeJS.ProcessEnv = { ...process.env, MEMGATE_SQLITE_PATH: db, MEMGATE_LOG_LEVEL: 'warn', MEMGATE_EMBEDDER: TEST_EMBEDDER };
  delete env['MEMGATE_API_KEYS'];
  const child = spawn(process.execPath, ['bin/memgate.mjs', 'serve', '--port', String(port)], { cwd: process.cwd(), env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((r) => child.on('exit', r));
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('memgate listening on') && resolve());
    void exited.then(() => reject(new Error(`server exited before listening: ${err}`)));
  });
  return { child, exited };
}
