import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, uniq, type TestServer } from './support/real-server.ts';
import { WsTester, http } from './support/ws-tester.ts';

/** docs/protocol.md's WebSocket contract over the real embedded runtime, in both encodings. */
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ config: { server: { maxTurnBytes: 1024, maxPayloadBytes: 64 * 1024 } } });
});
afterAll(() => srv.close());

async function started(binary = false): Promise<{ ws: WsTester; agentId: string; userId: string; sessionId: string }> {
  const ws = await WsTester.open(srv.wsUrl);
  const agentId = uniq('agent');
  const userId = uniq('user');
  const ctx = await ws.request({ op: 'start', agentId, userId }, binary);
  expect(ctx['op']).toBe('context');
  return { ws, agentId, userId, sessionId: ctx['sessionId'] as string };
}

for (const binary of [false, true]) {
  const enc = binary ? 'MessagePack' : 'JSON';

  describe(`every op over ${enc}`, () => {
    it('start → context with the whole preloaded context and the memory_search tool', async () => {
      const ws = await WsTester.open(srv.wsUrl);
      // A session id has one owner: each encoding's run is another user, so it takes its own id.
      const sessionId = uniq('call');
      const ctx = await ws.request({ op: 'start', id: 42, agentId: uniq('a'), userId: uniq('u'), sessionId }, binary);
      expect(ctx).toMatchObject({ op: 'context', id: 42, sessionId, _binary: binary });
      for (const k of ['profile', 'facts', 'possibly', 'recent', 'summaries', 'contextBlock', 'tools', 'tookMs']) expect(ctx).toHaveProperty(k);
      expect((ctx['tools'] as Array<{ type: string; function: { name: string } }>)[0]).toMatchObject({ type: 'function', function: { name: 'memory_search' } });
      await ws.close();
    });

    it('append → ack; the same turnId again is stored once, duplicate with the original seq', async () => {
      const { ws, agentId, userId } = await started(binary);
      const a = await ws.request({ op: 'append', role: 'user', text: 'My name is Ann Lee.', turnId: 'tt-1', ts: '2026-03-01T10:00:00Z', speaker: 'Ann', asrConfidence: 0.9 }, binary);
      expect(a).toMatchObject({ op: 'ack', turnId: 'tt-1', seq: 1, duplicate: false, _binary: binary });
      const b = await ws.request({ op: 'append', role: 'agent', text: 'Hello Ann', ts: Date.parse('2026-03-01T10:00:05Z'), interrupted: true }, binary);
      expect(b).toMatchObject({ op: 'ack', seq: 2, duplicate: false });
      expect(typeof b['turnId']).toBe('string');
      const dup = await ws.request({ op: 'append', role: 'user', text: 'My name is Ann Lee.', turnId: 'tt-1' }, binary);
      expect(dup).toMatchObject({ op: 'ack', turnId: 'tt-1', seq: 1, duplicate: true });
      const turns = await srv.runtime.service.bufferedTurns({ tenantId: 'default', agentId, userId });
      expect(turns.map((t) => t.turnId)).toEqual(['tt-1', b['turnId']]);
      expect(turns[0]).toMatchObject({ speaker: 'Ann', asrConfidence: 0.9, ts: Date.parse('2026-03-01T10:00:00Z') });
      await ws.close();
    });

    it('search → results; end → ended, after which the call needs a new start', async () => {
      const { ws } = await started(binary);
      await ws.request({ op: 'append', role: 'user', text: 'I live in Pune' }, binary);
      const r = await ws.request({ op: 'search', query: 'where do I live', k: 3, deadlineMs: 500 }, binary);
      expect(r).toMatchObject({ op: 'results', _binary: binary });
      expect(Array.isArray(r['results'])).toBe(true);
      expect(typeof r['tookMs']).toBe('number');
      expect(await ws.request({ op: 'end', id: 'e1' }, binary)).toMatchObject({ op: 'ended', id: 'e1' });
      expect(await ws.request({ op: 'append', role: 'user', text: 'x' }, binary)).toMatchObject({ op: 'error', code: 'not_started' });
      await ws.close();
    });

    it('ping → pong and subscribe → subscribed', async () => {
      const ws = await WsTester.open(srv.wsUrl);
      expect(await ws.request({ op: 'ping', id: 'p' }, binary)).toMatchObject({ op: 'pong', id: 'p' });
      expect(await ws.request({ op: 'subscribe', topics: ['events', 'agent/x', 'user/x/y'] }, binary)).toMatchObject({ op: 'subscribed', topics: ['events', 'agent/x', 'user/x/y'] });
      expect(await ws.request({ op: 'unsubscribe', topics: ['agent/x'] }, binary)).toMatchObject({ op: 'unsubscribed', topics: ['agent/x'] });
      await ws.close();
    });

    it('answers every invalid request with its code, echoing the id, and keeps the connection open', async () => {
      const ws = await WsTester.open(srv.wsUrl);
      const err = async (frame: Record<string, unknown>, code: string) =>
        expect(await ws.request(frame, binary)).toMatchObject({ op: 'error', id: frame['id'] ?? expect.anything(), code, message: expect.any(String) });
      await err({ op: 'append', role: 'user', text: 'x' }, 'not_started');
      await err({ op: 'search', query: 'x' }, 'not_started');
      await err({ op: 'end' }, 'not_started');
      await err({ op: 'dance' }, 'bad_request');
      await err({ id: 9 }, 'bad_request');
      await err({ op: 'start', agentId: 'a' }, 'bad_request');
      await err({ op: 'start', agentId: 'a', userId: 7 }, 'bad_request');
      await err({ op: 'start', agentId: 'a', userId: '' }, 'bad_request');
      await err({ op: 'subscribe', topics: ['not-a-topic'] }, 'bad_request');
      await ws.request({ op: 'start', agentId: uniq('a'), userId: uniq('u') }, binary);
      await err({ op: 'append', role: 'robot', text: 'x' }, 'bad_request');
      await err({ op: 'append', role: 'user' }, 'bad_request');
      await err({ op: 'append', role: 'user', text: 12 }, 'bad_request');
      // Blank text says nothing: refused, and not stored (the ack below is still seq 1).
      await err({ op: 'append', role: 'user', text: '' }, 'bad_request');
      await err({ op: 'append', role: 'agent', text: '  \n\t ' }, 'bad_request');
      await err({ op: 'append', role: 'user', text: '\u200b\u2060' }, 'bad_request');
      await err({ op: 'append', role: 'user', text: 'x', ts: 'not a date' }, 'bad_request');
      await err({ op: 'append', role: 'user', text: 'x', asrConfidence: 1.5 }, 'bad_request');
      // (msgpackr encodes a lone surrogate as U+FFFD, so only JSON can carry one.)
      if (!binary) await err({ op: 'append', role: 'user', text: 'lone \uD800 surrogate' }, 'bad_request');
      await err({ op: 'append', role: 'user', text: 'x'.repeat(1025) }, 'too_large');
      await err({ op: 'search', query: '' }, 'bad_request');
      await err({ op: 'search', query: 'x', k: 'many' }, 'bad_request');
      // A mistyped id cannot be echoed: the reply says null.
      ws.send({ op: 'ping', id: { nested: true } }, binary);
      expect(await ws.waitFor((r) => r['op'] === 'error' && r['id'] === null)).toMatchObject({ code: 'bad_request' });
      // Still open and working after all of that.
      expect(await ws.request({ op: 'append', role: 'user', text: 'fine' }, binary)).toMatchObject({ op: 'ack', seq: 1 });
      await ws.close();
    });

    it('a frame that does not parse gets bad_request with id null; the connection stays open', async () => {
      const ws = await WsTester.open(srv.wsUrl);
      ws.sendRaw(binary ? new Uint8Array([0x82, 0xa2, 0x6f]) : '{"op":"start",', binary);
      expect(await ws.waitFor((r) => r['op'] === 'error')).toMatchObject({ id: null, code: 'bad_request', _binary: binary });
      ws.sendRaw(binary ? new Uint8Array([0x93, 1, 2, 3]) : '[1,2,3]', binary);
      expect(await ws.waitFor((r) => r['op'] === 'error')).toMatchObject({ id: null, code: 'bad_request' });
      expect(await ws.request({ op: 'ping' }, binary)).toMatchObject({ op: 'pong' });
      await ws.close();
    });
  });
}

describe('session start', () => {
  it('is served from the context cache: no embedding, no vector search', async () => {
    const { ports } = srv.runtime;
    const embed = vi.spyOn(ports.embedder, 'embed');
    const vector = vi.spyOn(ports.acus, 'search');
    const keyword = vi.spyOn(ports.acus, 'keywordSearch');
    try {
      const { ws, agentId, userId } = await started();
      await ws.request({ op: 'append', role: 'user', text: 'My name is Noor Ali.' });
      await http(srv.base, 'POST', `/v1/agents/${agentId}/users/${userId}/flush`);
      for (const spy of [embed, vector, keyword]) spy.mockClear();
      const again = await ws.request({ op: 'start', agentId, userId });
      expect(again['op']).toBe('context');
      expect(embed).not.toHaveBeenCalled();
      expect(vector).not.toHaveBeenCalled();
      expect(keyword).not.toHaveBeenCalled();
      await ws.close();
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe('frames the transport refuses', () => {
  it('invalid UTF-8 in a text frame fails only that connection (RFC 6455 §8.1); acked turns stay', async () => {
    const bystander = await started();
    const bad = await started();
    const ack = await bad.ws.request({ op: 'append', role: 'user', text: 'kept', turnId: 'keep-me' });
    expect(ack['op']).toBe('ack');
    bad.ws.sendRaw(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), false);
    expect((await bad.ws.closed).code).toBeGreaterThanOrEqual(1000);
    expect(await bystander.ws.request({ op: 'append', role: 'user', text: 'unaffected' })).toMatchObject({ op: 'ack' });
    const turns = await srv.runtime.service.bufferedTurns({ tenantId: 'default', agentId: bad.agentId, userId: bad.userId });
    expect(turns.map((t) => t.turnId)).toEqual(['keep-me']);
    expect((await http(srv.base, 'GET', '/healthz')).status).toBe(200);
    await bystander.ws.close();
  });

  it('a frame over maxPayloadBytes closes with 1009 (message too big); others are unaffected', async () => {
    const bystander = await started(true);
    const big = await started();
    big.ws.send({ op: 'append', id: 1, role: 'user', text: 'x'.repeat(70 * 1024) });
    expect((await big.ws.closed).code).toBe(1009);
    const bigBinary = await started(true);
    bigBinary.ws.sendRaw(Buffer.alloc(300 * 1024, 0x41), true);
    expect((await bigBinary.ws.closed).code).toBe(1009);
    expect(await bystander.ws.request({ op: 'append', role: 'user', text: 'still fine' }, true)).toMatchObject({ op: 'ack' });
    await bystander.ws.close();
  });

  it('an upgrade asking for a WebSocket version other than 13 gets 426 naming version 13', async () => {
    const { status, headers } = await rawUpgrade(srv.gateway.port, '99');
    expect(status).toBe(426);
    expect(headers['sec-websocket-version']).toBe('13');
    expect((await rawUpgrade(srv.gateway.port, '13')).status).toBe(101);
  });

  it('a text within the frame limit but over the turn limit is too_large, and the connection stays open', async () => {
    const { ws } = await started();
    expect(await ws.request({ op: 'append', role: 'user', text: 'é'.repeat(600) })).toMatchObject({ op: 'error', code: 'too_large' });
    expect(await ws.request({ op: 'append', role: 'user', text: 'é'.repeat(500) })).toMatchObject({ op: 'ack' });
    await ws.close();
  });
});

/** A bare WebSocket upgrade over TCP (the `ws` client only speaks version 13): its status line and headers. */
function rawUpgrade(port: number, version: string): Promise<{ status: number; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () =>
      sock.write(`GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: ${version}\r\n\r\n`),
    );
    let buf = '';
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end === -1) return;
      const [line, ...rest] = buf.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const h of rest) headers[h.slice(0, h.indexOf(':')).toLowerCase()] = h.slice(h.indexOf(':') + 1).trim();
      sock.destroy();
      resolve({ status: Number(line?.split(' ')[1]), headers });
    });
    sock.on('error', reject);
  });
}
