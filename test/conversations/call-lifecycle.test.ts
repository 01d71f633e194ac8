import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemgateEvent } from '../../src/core/wire.ts';
import { blockDefects } from '../../src/memory/block-check.ts';
import { uniq } from '../gateway/support/real-server.ts';
import { WsTester, http } from '../gateway/support/ws-tester.ts';
import { describeWithServer } from '../support/servers.ts';
import { startProductionTestServer, startTestServer, type TestServer } from './support.ts';

/**
 * docs/protocol.md "Call lifecycle" as calls, over HTTP and over the WebSocket, on the embedded
 * default and on Redis + NATS: whose a session id is, reopening, re-sent turns after the end,
 * a dropped socket ending its call after the grace, a reconnect within it keeping the call.
 */

/** Short, so a dropped call ends within a test; a reconnect in these tests takes a few ms. */
const GRACE_MS = 400;

describe('call lifecycle on the embedded default', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({ workers: true, config: { server: { dropGraceMs: GRACE_MS } } });
  });
  afterAll(() => srv.close());
  lifecycle(() => srv);
});

describeWithServer('redis', 'call lifecycle on Redis + NATS', (redisUrl) => {
  describeWithServer('nats', 'call lifecycle on Redis + NATS', (natsUrl) => {
    let srv: TestServer;
    beforeAll(async () => {
      srv = await startProductionTestServer(redisUrl, natsUrl, 'mglife', { dropGraceMs: GRACE_MS });
    });
    afterAll(() => srv.close());
    lifecycle(() => srv);

    it('a reconnect that lands on another gateway of the cluster within the grace keeps the call; its own drop later ends it once', async () => {
      // A second gateway on the same Redis keys and NATS stream (its documents are its own; calls live in Redis).
      const { adapters, redis, nats } = srv.runtime.config;
      const other = await startTestServer({ config: { adapters, redis, nats, server: { dropGraceMs: GRACE_MS } } });
      const bus = listen(srv);
      try {
        const agentId = uniq('agent');
        const userId = uniq('user');
        const sid = uniq('call');
        const ws1 = await WsTester.open(srv.wsUrl);
        await ws1.request({ op: 'start', agentId, userId, sessionId: sid });
        expect(await ws1.request({ op: 'append', role: 'user', text: 'My name is Leela Nair.', turnId: `${sid}-1` })).toMatchObject({ op: 'ack', seq: 1 });
        ws1.ws.terminate();
        await ws1.closed;

        const ws2 = await WsTester.open(other.wsUrl);
        expect(await ws2.request({ op: 'start', agentId, userId, sessionId: sid })).toMatchObject({ op: 'context', sessionId: sid });
        expect(await ws2.request({ op: 'append', role: 'user', text: 'My name is Leela Nair.', turnId: `${sid}-1` })).toMatchObject({ op: 'ack', seq: 1, duplicate: true });
        // The first gateway's deferred end came due and found the call started again: it did nothing.
        await new Promise((r) => setTimeout(r, GRACE_MS * 3));
        expect((await srv.runtime.service.session('default', sid))?.endedAt).toBeNull();
        expect(bus.events.filter((e) => e.type === 'session.ended' && e.sessionId === sid)).toEqual([]);

        ws2.ws.terminate();
        const ended = await until('session.ended', () => bus.events.find((e) => e.type === 'session.ended' && e.sessionId === sid));
        expect(ended.data).toMatchObject({ reason: 'dropped' });
        await new Promise((r) => setTimeout(r, GRACE_MS));
        expect(bus.events.filter((e) => e.type === 'session.ended' && e.sessionId === sid)).toHaveLength(1);
      } finally {
        bus.stop();
        await other.close();
      }
    });
  });
});

/** What a reply says, whichever transport carried it: the body, or the error's code. */
interface Answer {
  ok: boolean;
  code?: string;
  status?: number;
  body: Record<string, any>;
}

/** One caller's call, driven over one transport. */
interface Call {
  readonly sessionId: string;
  start(sessionId?: string): Promise<Answer>;
  append(text: string, turnId?: string, role?: 'user' | 'agent'): Promise<Answer>;
  search(query: string): Promise<Answer>;
  end(): Promise<Answer>;
  close(): Promise<void>;
}

type Dial = (srv: TestServer, agentId: string, userId: string) => Promise<Call>;

const overHttp: Dial = async (srv, agentId, userId) => {
  let sessionId = '';
  const answer = (r: { status: number; body: any }): Answer => (r.status === 200 ? { ok: true, status: 200, body: r.body } : { ok: false, status: r.status, code: r.body?.error?.code, body: r.body });
  return {
    get sessionId() {
      return sessionId;
    },
    async start(id) {
      const r = answer(await http(srv.base, 'POST', '/v1/sessions', { body: { agentId, userId, ...(id ? { sessionId: id } : {}) } }));
      if (r.ok) sessionId = r.body['sessionId'];
      else if (id) sessionId = id; // a refused client that goes on regardless
      return r;
    },
    async append(text, turnId, role = 'user') {
      // Naming the caller's agent and user (optional) makes a turn sent to someone else's session id a 409, never a turn under them.
      return answer(await http(srv.base, 'POST', `/v1/sessions/${sessionId}/turns`, { body: { role, text, agentId, userId, ...(turnId ? { turnId } : {}) } }));
    },
    search: async (query) => answer(await http(srv.base, 'POST', '/v1/search', { body: { agentId, userId, query, k: 5 } })),
    async end() {
      return answer(await http(srv.base, 'POST', `/v1/sessions/${sessionId}/end`));
    },
    async close() {},
  };
};

const overWs: Dial = async (srv, agentId, userId) => {
  const ws = await WsTester.open(srv.wsUrl);
  const answer = (r: Record<string, any>): Answer => (r['op'] === 'error' ? { ok: false, code: r['code'], body: r } : { ok: true, body: r });
  let sessionId = '';
  return {
    get sessionId() {
      return sessionId;
    },
    start: async (id) => {
      const r = answer(await ws.request({ op: 'start', agentId, userId, ...(id ? { sessionId: id } : {}) }));
      if (r.ok) sessionId = r.body['sessionId'];
      return r;
    },
    append: async (text, turnId, role = 'user') => answer(await ws.request({ op: 'append', role, text, ...(turnId ? { turnId } : {}) })),
    search: async (query) => answer(await ws.request({ op: 'search', query, k: 5 })),
    end: async () => answer(await ws.request({ op: 'end' })),
    close: async () => void (await ws.close()),
  };
};

const TRANSPORTS: Array<[string, Dial]> = [
  ['HTTP', overHttp],
  ['WebSocket', overWs],
];

/** Live events of the server's bus (every gateway's and worker's), kept from now on. */
function listen(srv: TestServer): { events: MemgateEvent[]; stop(): void } {
  const events: MemgateEvent[] = [];
  const stop = srv.runtime.ports.events.subscribe((e) => events.push(e));
  return { events, stop };
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function lifecycle(server: () => TestServer): void {
  const buffered = (agentId: string, userId: string) => server().runtime.service.bufferedTurns({ tenantId: 'default', agentId, userId });
  const session = (sessionId: string) => server().runtime.service.session('default', sessionId);

  for (const [name, dial] of TRANSPORTS) {
    describe(`over ${name}`, () => {
      it('a dropped call: what it said, not yet extracted, is in the next start’s block, which reads cleanly', async () => {
        const agentId = uniq('agent');
        const userId = uniq('user');
        const first = await dial(server(), agentId, userId);
        // This start builds and caches the (empty) context: the next one must not serve it stale.
        expect((await first.start()).ok).toBe(true);
        expect((await first.append('My name is Dev Patel and my budget is 70 lakhs.')).ok).toBe(true);
        await first.close(); // no end: the socket (or the HTTP client) just goes away
        const next = await dial(server(), agentId, userId);
        const ctx = await next.start();
        expect(ctx.ok).toBe(true);
        const block = ctx.body['contextBlock'] as string;
        expect(block).toMatch(/^## Recent conversation$/m);
        expect(block).toContain('user: My name is Dev Patel and my budget is 70 lakhs.');
        expect(ctx.body['recent']).toEqual([expect.objectContaining({ role: 'user', text: 'My name is Dev Patel and my budget is 70 lakhs.' })]);
        expect(blockDefects(block)).toEqual([]);
        await next.end();
        await next.close();
      });

      it('a session id belongs to one user: bob starting alice’s shared-1 is refused with conflict, and nothing of bob’s is stored under alice', async () => {
        const agentId = uniq('agent');
        const sessionId = uniq('shared-1');
        const alice = await dial(server(), agentId, 'alice-' + sessionId);
        const bob = await dial(server(), agentId, 'bob-' + sessionId);
        expect((await alice.start(sessionId)).ok).toBe(true);
        expect((await alice.append('My name is Alice Rao and my budget is 60 lakhs.')).ok).toBe(true);

        const refused = await bob.start(sessionId);
        expect(refused).toMatchObject({ ok: false, code: 'conflict' });
        if (name === 'HTTP') expect(refused.status).toBe(409);
        // Bob's client carries on regardless: its turn is not stored (and never under alice).
        const turn = await bob.append('My name is Bob Stone and my budget is 99 lakhs.');
        expect(turn.ok).toBe(false);

        const aliceTurns = await buffered(agentId, 'alice-' + sessionId);
        expect(aliceTurns.map((t) => t.text)).toEqual(['My name is Alice Rao and my budget is 60 lakhs.']);
        expect(await buffered(agentId, 'bob-' + sessionId)).toEqual([]);
        // Another agent of the tenant is another owner too.
        const otherAgent = await dial(server(), uniq('agent'), 'alice-' + sessionId);
        expect(await otherAgent.start(sessionId)).toMatchObject({ ok: false, code: 'conflict' });
        for (const c of [alice, bob, otherAgent]) await c.close();
      });

      it('a reconnect after the end reopens the call: reopened:true, and its turns are accepted again', async () => {
        const agentId = uniq('agent');
        const userId = uniq('user');
        const sid = uniq('call');
        const first = await dial(server(), agentId, userId);
        const opened = await first.start(sid);
        expect(opened.ok).toBe(true);
        expect(opened.body['reopened']).toBeUndefined();
        expect((await first.append('My name is Meera Iyer.', `${sid}-1`)).ok).toBe(true);
        expect((await first.end()).ok).toBe(true);
        await first.close();

        const again = await dial(server(), agentId, userId);
        const reopened = await again.start(sid);
        expect(reopened).toMatchObject({ ok: true, body: { sessionId: sid, reopened: true } });
        const ack = await again.append('I moved to Pune last week.', `${sid}-2`);
        expect(ack).toMatchObject({ ok: true, body: { duplicate: false } });
        expect((await session(sid))?.endedAt).toBeNull();
        expect((await buffered(agentId, userId)).map((t) => [t.sessionId, t.text])).toEqual([
          [sid, 'My name is Meera Iyer.'],
          [sid, 'I moved to Pune last week.'],
        ]);
        await again.end();
        await again.close();
      });

      it('a stored turn re-sent after the end is answered duplicate with its original seq; a new turn is refused not_started', async () => {
        const agentId = uniq('agent');
        const userId = uniq('user');
        const call = await dial(server(), agentId, userId);
        await call.start(uniq('call'));
        const first = await call.append('My email is ravi@example.com.', 'resend-1');
        expect(first).toMatchObject({ ok: true, body: { duplicate: false } });
        expect((await call.end()).ok).toBe(true);

        // The ack was lost; the client re-sends the turn by its turnId.
        const resent = await call.append('My email is ravi@example.com.', 'resend-1');
        expect(resent).toMatchObject({ ok: true, body: { turnId: 'resend-1', seq: first.body['seq'], duplicate: true } });
        // A turn never stored is not taken by the ended call.
        const late = await call.append('Also call me back tomorrow.', 'resend-2');
        expect(late).toMatchObject({ ok: false, code: 'not_started' });
        if (name === 'HTTP') expect(late.status).toBe(400);
        const noId = await call.append('One more thing.');
        expect(noId).toMatchObject({ ok: false, code: 'not_started' });
        expect((await buffered(agentId, userId)).map((t) => t.turnId)).toEqual(['resend-1']);
        await call.close();
      });
    });
  }

  it('a socket closed without end ends its call after the grace: session.ended reason dropped, extraction queued, the next call knows', async () => {
    const agentId = uniq('agent');
    const userId = uniq('user');
    const bus = listen(server());
    try {
      const ws = await WsTester.open(server().wsUrl);
      const start = await ws.request({ op: 'start', agentId, userId });
      const sid = start['sessionId'] as string;
      expect((await ws.request({ op: 'append', role: 'user', text: 'My name is Kavya Menon.', turnId: `${sid}-1` }))['op']).toBe('ack');
      // The line drops: no end.
      ws.ws.terminate();

      const ended = await until('session.ended', () => bus.events.find((e) => e.type === 'session.ended' && e.sessionId === sid));
      expect(ended.data).toMatchObject({ reason: 'dropped', lastSeq: 1 });
      expect((await session(sid))?.endedAt).not.toBeNull();
      // The drop queued the call's extraction as an end does: it runs without a flush.
      await until('extraction', () => bus.events.find((e) => e.type === 'extraction.finished' && e.userId === userId));
      const next = await http(server().base, 'POST', '/v1/sessions', { body: { agentId, userId } });
      expect(next.body.contextBlock).toContain('Kavya Menon');
      // Ended once: no second session.ended for it.
      expect(bus.events.filter((e) => e.type === 'session.ended' && e.sessionId === sid)).toHaveLength(1);
    } finally {
      bus.stop();
    }
  });

  it('a reconnect within the grace keeps the call: no end, no session.ended, turns accepted on the new socket', async () => {
    const agentId = uniq('agent');
    const userId = uniq('user');
    const sid = uniq('call');
    const bus = listen(server());
    try {
      const ws1 = await WsTester.open(server().wsUrl);
      await ws1.request({ op: 'start', agentId, userId, sessionId: sid });
      expect((await ws1.request({ op: 'append', role: 'user', text: 'My name is Arjun Das.', turnId: `${sid}-1` }))['op']).toBe('ack');
      ws1.ws.terminate();
      await ws1.closed;

      const ws2 = await WsTester.open(server().wsUrl);
      const back = await ws2.request({ op: 'start', agentId, userId, sessionId: sid });
      expect(back).toMatchObject({ op: 'context', sessionId: sid });
      // Re-sent by turnId (its ack was in flight) and a new turn: stored once, and the new one accepted.
      expect(await ws2.request({ op: 'append', role: 'user', text: 'My name is Arjun Das.', turnId: `${sid}-1` })).toMatchObject({ op: 'ack', seq: 1, duplicate: true });
      expect(await ws2.request({ op: 'append', role: 'user', text: 'I work as a pilot.', turnId: `${sid}-2` })).toMatchObject({ op: 'ack', duplicate: false });

      // Well past the first socket's grace: the call is still live.
      await new Promise((r) => setTimeout(r, GRACE_MS * 3));
      expect((await session(sid))?.endedAt).toBeNull();
      expect(bus.events.filter((e) => e.type === 'session.ended' && e.sessionId === sid)).toEqual([]);

      expect(await ws2.request({ op: 'end' })).toMatchObject({ op: 'ended' });
      const ended = await until('session.ended', () => bus.events.find((e) => e.type === 'session.ended' && e.sessionId === sid));
      expect(ended.data).toMatchObject({ reason: 'end' });
      await ws2.close();
    } finally {
      bus.stop();
    }
  });

  it('an HTTP turn naming another user than the session’s owner is refused with 409, not stored under the owner', async () => {
    const agentId = uniq('agent');
    const start = await http(server().base, 'POST', '/v1/sessions', { body: { agentId, userId: 'alice' } });
    const sid = start.body.sessionId as string;
    const r = await http(server().base, 'POST', `/v1/sessions/${sid}/turns`, { body: { role: 'user', text: 'I am Bob', agentId, userId: 'bob' } });
    expect(r).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });
    expect(await buffered(agentId, 'alice')).toEqual([]);
    const mine = await http(server().base, 'POST', `/v1/sessions/${sid}/turns`, { body: { role: 'user', text: 'I am Alice', agentId, userId: 'alice' } });
    expect(mine.status).toBe(200);
  });
}
