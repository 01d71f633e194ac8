import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../../src/gateway/server.ts';
import { FakeMemoryApi, fakeRuntime } from './support/fake-runtime.ts';
import { WsTester, http } from './support/ws-tester.ts';

/** Gateway behaviour over real sockets with a scripted service (async buffer, slow replies, failures). */
describe('gateway over a scripted service', () => {
  let gw: Gateway | null = null;
  const sockets: WsTester[] = [];

  async function boot(service: FakeMemoryApi): Promise<string> {
    gw = await startGateway(fakeRuntime(service));
    return `ws://127.0.0.1:${gw.port}/v1/ws`;
  }

  afterEach(async () => {
    for (const s of sockets.splice(0)) s.ws.terminate();
    await gw?.close({ drainTimeoutMs: 1000 });
    gw = null;
  });

  it('acks through an asynchronous turn buffer (the Promise path), in both encodings', async () => {
    const svc = new FakeMemoryApi();
    svc.asyncAppend = true;
    svc.delayMs = 5;
    const ws = await WsTester.open(await boot(svc));
    sockets.push(ws);
    await ws.request({ op: 'start', agentId: 'a', userId: 'u', sessionId: 's1' });
    const a = await ws.request({ op: 'append', role: 'user', text: 'hi', turnId: 'x1' });
    expect(a).toMatchObject({ op: 'ack', turnId: 'x1', seq: 1, duplicate: false, _binary: false });
    const b = await ws.request({ op: 'append', role: 'user', text: 'hi', turnId: 'x1' }, true);
    expect(b).toMatchObject({ op: 'ack', turnId: 'x1', seq: 1, duplicate: true, _binary: true });
  });

  it('holds requests pipelined behind a slow start until it completes, in order', async () => {
    const svc = new FakeMemoryApi();
    svc.delayMs = 50;
    const ws = await WsTester.open(await boot(svc));
    sockets.push(ws);
    ws.send({ op: 'start', id: 1, agentId: 'a', userId: 'u' });
    ws.send({ op: 'append', id: 2, role: 'user', text: 'one' });
    ws.send({ op: 'append', id: 3, role: 'agent', text: 'two' });
    const [ctx, a2, a3] = await Promise.all([ws.waitFor((r) => r['id'] === 1), ws.waitFor((r) => r['id'] === 2), ws.waitFor((r) => r['id'] === 3)]);
    expect(ctx['op']).toBe('context');
    expect([a2['op'], a2['seq'], a3['op'], a3['seq']]).toEqual(['ack', 1, 'ack', 2]);
  });

  it('answers an unexpected service failure with internal, without leaking its message, and stays open', async () => {
    const svc = new FakeMemoryApi();
    svc.failSearch = true;
    const ws = await WsTester.open(await boot(svc));
    sockets.push(ws);
    await ws.request({ op: 'start', agentId: 'a', userId: 'u' });
    const r = await ws.request({ op: 'search', query: 'x' });
    expect(r).toMatchObject({ op: 'error', code: 'internal', message: 'internal error' });
    expect((await ws.request({ op: 'append', role: 'user', text: 'still here' }))['op']).toBe('ack');
  });

  it('close() waits for in-flight requests, answers them, then closes connections with 1001', async () => {
    const svc = new FakeMemoryApi();
    const url = await boot(svc);
    const ws = await WsTester.open(url);
    sockets.push(ws);
    await ws.request({ op: 'start', agentId: 'a', userId: 'u' });
    svc.delayMs = 200;
    svc.asyncAppend = true;
    const pending = ws.request({ op: 'append', role: 'user', text: 'in flight', turnId: 'late' });
    await new Promise((r) => setTimeout(r, 20));
    const closing = gw!.close();
    const late = await ws.request({ op: 'append', role: 'user', text: 'too late' });
    expect(late).toMatchObject({ op: 'error', code: 'unavailable' });
    expect(await pending).toMatchObject({ op: 'ack', turnId: 'late' });
    await closing;
    expect((await ws.closed).code).toBe(1001);
    expect(svc.turns.get('default/a/u')?.map((t) => t.turnId)).toEqual(['late']);
    await expect(WsTester.open(url)).rejects.toBeDefined();
    gw = null;
  });

  it('serves healthz and 404s unknown routes', async () => {
    await boot(new FakeMemoryApi());
    const base = `http://127.0.0.1:${gw!.port}`;
    expect(await http(base, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await http(base, 'GET', '/nope')).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
  });

  it('a fault while answering an op (sync or async buffer, either encoding) is answered internal and the connection and process live on', async () => {
    for (const asyncAppend of [false, true]) {
      const svc = new FakeMemoryApi();
      svc.asyncAppend = asyncAppend;
      const ws = await WsTester.open(await boot(svc));
      sockets.push(ws);
      await ws.request({ op: 'start', agentId: 'a', userId: 'u', sessionId: 's1' });
      svc.unencodableAck = true;
      for (const binary of [false, true]) {
        expect(await ws.request({ op: 'append', role: 'user', text: 'hi' }, binary), `async ${asyncAppend}`).toMatchObject({ op: 'error', code: 'internal' });
      }
      svc.unencodableAck = false;
      expect(await ws.request({ op: 'append', role: 'user', text: 'hi', turnId: 'after' })).toMatchObject({ op: 'ack', turnId: 'after' });
      ws.ws.terminate();
      await gw?.close({ drainTimeoutMs: 1000 });
      gw = null;
    }
  });
});

describe('backpressure', () => {
  it('refuses new work with rate_limited while a client leaves its replies unread; nothing refused is stored', async () => {
    const svc = new FakeMemoryApi();
    const gw = await startGateway(fakeRuntime(svc, { server: { port: 0, maxBackpressureBytes: 256 * 1024 } }));
    try {
      const ws = await WsTester.open(`ws://127.0.0.1:${gw.port}/v1/ws`);
      await ws.request({ op: 'start', agentId: 'a', userId: 'u' });
      ws.ws.pause();
      // Big ids make big acks (the id is echoed): unread replies pile up fast.
      const pad = 'p'.repeat(100 * 1024);
      const sent: string[] = [];
      for (let i = 0; i < 150; i++) {
        sent.push(`t${i}`);
        ws.send({ op: 'append', id: `${i}${pad}`, role: 'user', text: 'x', turnId: `t${i}` });
      }
      await new Promise((r) => setTimeout(r, 300));
      ws.ws.resume();
      // A pong sent while the buffer is over uWS's hard limit is dropped: ping until one comes back.
      for (let n = 0; ; n++) {
        ws.send({ op: 'ping', id: `last${n}` });
        const pong = await ws.waitFor((r) => r['op'] === 'pong', 200).catch(() => null);
        if (pong) break;
      }
      const acked = new Set<string>();
      const refused = new Set<string>();
      for (const r of ws.inbox) {
        const turnId = `t${String(r['id']).slice(0, -pad.length)}`;
        if (r['op'] === 'ack') acked.add(turnId);
        if (r['op'] === 'error' && r['code'] === 'rate_limited') refused.add(turnId);
      }
      const stored = new Set((svc.turns.get('default/a/u') ?? []).map((t) => t.turnId));
      expect(refused.size).toBeGreaterThan(0);
      for (const id of acked) expect(stored.has(id)).toBe(true);
      for (const id of refused) expect(stored.has(id)).toBe(false);
      expect(gw.metrics.backpressure.get()).toBeGreaterThan(0);
      // Once the client reads again, the connection serves normally.
      expect(await ws.request({ op: 'append', role: 'user', text: 'after', turnId: 'after' })).toMatchObject({ op: 'ack' });
      ws.ws.terminate();
    } finally {
      await gw.close({ drainTimeoutMs: 1000 });
    }
  });
});
