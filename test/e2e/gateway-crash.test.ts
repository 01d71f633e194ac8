/**
 * Issue 18, "dropped calls forgotten": a gateway that is SIGKILLed (or crashes) takes its sockets
 * and its in-memory drop timers with it. The calls it held, and the calls it was waiting out a
 * grace for, are durable in the shared store (docs/protocol.md, "Call lifecycle"): the next gateway
 * to start on the same store, or another gateway of the cluster, ends them with reason `dropped`,
 * their turns are extracted and reach the next call's context block; a call that reconnected to
 * another gateway within the grace is never ended. Real `memgate serve` processes, real SIGKILL.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from 'nats';
import type { Redis } from 'ioredis';
import { JetStreamJobBus } from '../../src/adapters/nats/index.ts';
import { createRedis } from '../../src/adapters/redis/index.ts';
import { http, WsTester } from '../gateway/support/ws-tester.ts';
import { describeWithServer } from '../support/servers.ts';
import { startGatewayProcess, tail, type MemgateProcess } from '../support/processes.ts';
import { sleep, waitFor } from '../support/wait.ts';
import { removeDir } from '../support/tmp.ts';
import { writeRedisNatsProfile } from '../support/stack-profile.ts';
import { dropRunData } from './support/run-data.ts';

/** Short timings so a test sees the ends; the documented bounds are in terms of these keys. */
const GRACE_MS = 1_000;
const LEASE_MS = 3_000;
const SWEEP_MS = 100;
const TIMINGS = { MEMGATE_DROP_GRACE_MS: String(GRACE_MS), MEMGATE_CALL_LEASE_MS: String(LEASE_MS), MEMGATE_SWEEP_INTERVAL_MS: String(SWEEP_MS) };
/** docs/protocol.md: a dead gateway's calls end within lease + grace + one sweep of its death; a drop within grace + one sweep of the close. Plus room for a loaded machine. */
const HELD_BOUND_MS = LEASE_MS + GRACE_MS + SWEEP_MS + 3_000;
const DROP_BOUND_MS = GRACE_MS + SWEEP_MS + 3_000;

interface Gw {
  proc: MemgateProcess;
  url: string;
  wsUrl: string;
}

type Event = { type: string; sessionId?: string; userId: string; data: Record<string, unknown> };

const procs: MemgateProcess[] = [];
const sockets: WsTester[] = [];

async function gateway(name: string, env: Record<string, string>, args: string[] = []): Promise<Gw> {
  const { proc, url } = await startGatewayProcess({ name, env: { MEMGATE_PORT: '0', MEMGATE_LOG_LEVEL: 'info', ...TIMINGS, ...env }, args });
  procs.push(proc);
  return { proc, url, wsUrl: `${url.replace('http', 'ws')}/v1/ws` };
}

async function open(gw: Gw): Promise<WsTester> {
  const ws = await WsTester.open(gw.wsUrl);
  sockets.push(ws);
  return ws;
}

/** A live call: started, its turns acked. */
async function call(gw: Gw, agentId: string, userId: string, sessionId: string, texts: string[]): Promise<WsTester> {
  const ws = await open(gw);
  expect(await ws.request({ op: 'start', agentId, userId, sessionId })).toMatchObject({ op: 'context', sessionId });
  for (const [i, text] of texts.entries()) expect(await ws.request({ op: 'append', role: 'user', text, turnId: `${sessionId}-${i + 1}` })).toMatchObject({ op: 'ack', seq: i + 1 });
  return ws;
}

/** Every event of the tenant, as a subscriber on `gw` hears them. */
async function listen(gw: Gw): Promise<{ events: Event[]; ws: WsTester }> {
  const ws = await open(gw);
  expect(await ws.request({ op: 'subscribe', topics: ['events'] })).toMatchObject({ op: 'subscribed' });
  const events: Event[] = [];
  ws.ws.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString('utf8')) as { op: string; event?: Event };
    if (frame.op === 'event' && frame.event) events.push(frame.event);
  });
  return { events, ws };
}

/** The gateway's `swept a dropped call` log record for the session, once it is there. */
async function swept(gw: Gw, sessionId: string, timeoutMs: number): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  await waitFor(() => (found = gw.proc.logs('swept a dropped call').find((r) => r['sessionId'] === sessionId)) !== undefined, timeoutMs, `${sessionId} swept`, 25).catch((err: Error) => {
    throw new Error(`${err.message}\n${tail(gw.proc.lines)}`);
  });
  return found!;
}

async function kill(gw: Gw): Promise<void> {
  gw.proc.child.kill('SIGKILL');
  // The kernel closes its sockets: the clients see their calls' connections drop.
  expect((await gw.proc.exited).signal).toBe('SIGKILL');
}

afterAll(async () => {
  for (const ws of sockets.splice(0)) ws.ws.terminate();
  await Promise.allSettled(procs.map((p) => p.stop('SIGTERM', 5_000)));
}, 30_000);

describe('a SIGKILLed gateway on the embedded default: the next gateway on the same data ends what it left open', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memgate-crash-'));
  const env = { MEMGATE_SQLITE_PATH: join(dir, 'memgate.db') };
  afterAll(() => removeDir(dir));

  it('ends the live call and the call in its grace as dropped; their turns are extracted and the next calls know them', async () => {
    const tag = randomBytes(4).toString('hex');
    const agentId = `agent-${tag}`;
    const first = await gateway('gateway-1', env);
    // Leela's call is live when the gateway dies; Ravi's socket closed a moment before (its grace running).
    await call(first, agentId, 'leela', `live-${tag}`, ['My name is Leela Nair.', 'I am moving to Pune next month.']);
    const dropped = await call(first, agentId, 'ravi', `drop-${tag}`, ['My name is Ravi Menon.']);
    dropped.ws.terminate();
    await dropped.closed;
    await sleep(200); // the gateway hears the close and records the deferred end
    await kill(first);

    const second = await gateway('gateway-2', env);
    const ravi = await swept(second, `drop-${tag}`, DROP_BOUND_MS);
    expect(ravi).toMatchObject({ why: 'its grace ran out' });
    const leela = await swept(second, `live-${tag}`, HELD_BOUND_MS);
    expect(leela).toMatchObject({ why: 'its gateway is gone', heldBy: expect.stringMatching(/^gw_/) });
    // Each was ended once, by one sweep.
    expect(second.proc.logs('swept a dropped call').filter((r) => String(r['sessionId']).endsWith(tag))).toHaveLength(2);

    for (const [userId, sessionId, said] of [
      ['leela', `live-${tag}`, 'Leela Nair'],
      ['ravi', `drop-${tag}`, 'Ravi Menon'],
    ] as const) {
      // Ended: a new turn is refused until a start reopens the call.
      const late = await http(second.url, 'POST', `/v1/sessions/${sessionId}/turns`, { body: { role: 'user', text: 'still there?' } });
      expect(late.status, JSON.stringify(late.body)).toBe(400);
      expect(late.body.error.code).toBe('not_started');
      // The end queued the extraction: it runs and commits without a flush (the lane heard it from this gateway's start).
      const committed = async () =>
        ((await http(second.url, 'GET', '/v1/extraction')).body.recent as Array<{ agentId: string; userId: string; state: string }>).some(
          (r) => r.agentId === agentId && r.userId === userId && r.state === 'committed',
        );
      await waitFor(committed, 10_000, `${userId} extracted`, 50);
      const next = await http(second.url, 'POST', '/v1/sessions', { body: { agentId, userId } });
      expect(next.status).toBe(200);
      expect(next.body.contextBlock).toContain(said);
    }
  }, 60_000);
});

describeWithServer('nats', 'gateway crash in a cluster', (natsServers) => {
  describeWithServer('redis', 'a SIGKILLed gateway of a cluster on Redis + NATS: another gateway ends its calls', (redisServer) => {
    const tag = randomBytes(5).toString('hex');
    const redisPrefix = `mgcr:${tag}:`;
    const stream = `MGCR_${tag}`;
    const dir = mkdtempSync(join(tmpdir(), 'memgate-crash-cluster-'));
    let redis: Redis | undefined;
    let nc: NatsConnection | undefined;
    let bus: JetStreamJobBus | undefined;

    afterAll(async () => {
      redis = createRedis(redisServer);
      nc = await connect({ servers: natsServers });
      bus = await JetStreamJobBus.create(nc, { stream, subjectPrefix: `mgcr${tag}` });
      await dropRunData({ redis, nc, bus }, redisPrefix);
      removeDir(dir);
    }, 30_000);

    it('ends the dead gateway’s live call and its call in grace once each, and keeps the call that reconnected to the survivor', async () => {
      const profile = writeRedisNatsProfile(dir, 'offline');
      const env = {
        MEMGATE_REDIS_URL: redisServer,
        MEMGATE_NATS_URL: natsServers,
        MEMGATE_REDIS_PREFIX: redisPrefix,
        MEMGATE_NATS_STREAM: stream,
        MEMGATE_NATS_PREFIX: `mgcr${tag}`,
        MEMGATE_SQLITE_PATH: join(dir, 'memgate.db'),
      };
      const [a, b] = await Promise.all([gateway('gateway-a', env, ['--config', profile]), gateway('gateway-b', env, ['--config', profile])]);
      const { events } = await listen(b);
      const agentId = `agent-${tag}`;
      const ids = { live: `live-${tag}`, grace: `grace-${tag}`, moved: `moved-${tag}` };
      await call(a, agentId, 'leela', ids.live, ['My name is Leela Nair.']);
      const inGrace = await call(a, agentId, 'ravi', ids.grace, ['My name is Ravi Menon.']);
      await call(a, agentId, 'arjun', ids.moved, ['My name is Arjun Das.']);
      inGrace.ws.terminate();
      await inGrace.closed;
      await sleep(200);
      await kill(a);

      // Arjun's client reconnects to the survivor within the grace, re-sends its unacked turn and goes on.
      const back = await open(b);
      expect(await back.request({ op: 'start', agentId, userId: 'arjun', sessionId: ids.moved })).toMatchObject({ op: 'context', sessionId: ids.moved });
      expect(await back.request({ op: 'append', role: 'user', text: 'My name is Arjun Das.', turnId: `${ids.moved}-1` })).toMatchObject({ op: 'ack', seq: 1, duplicate: true });

      const ended = (sessionId: string) => events.filter((e) => e.type === 'session.ended' && e.sessionId === sessionId);
      await waitFor(() => ended(ids.grace).length > 0, DROP_BOUND_MS, 'the call in grace ended', 25);
      await waitFor(() => ended(ids.live).length > 0, HELD_BOUND_MS, 'the dead gateway’s live call ended', 25);
      expect(ended(ids.grace)[0]!.data).toMatchObject({ reason: 'dropped' });
      expect(ended(ids.live)[0]!.data).toMatchObject({ reason: 'dropped' });

      // Well past the dead gateway's lease and grace, and many sweeps: the reconnected call is live.
      await sleep(GRACE_MS + 10 * SWEEP_MS);
      expect(ended(ids.moved)).toEqual([]);
      expect(await back.request({ op: 'append', role: 'user', text: 'I fly for a living.', turnId: `${ids.moved}-2` })).toMatchObject({ op: 'ack', seq: 2, duplicate: false });
      const late = await http(b.url, 'POST', `/v1/sessions/${ids.moved}/turns`, { body: { role: 'user', text: 'And I live in Kochi.' } });
      expect(late.status, JSON.stringify(late.body)).toBe(200);
      // Each dropped call was ended exactly once.
      expect(ended(ids.grace)).toHaveLength(1);
      expect(ended(ids.live)).toHaveLength(1);
      // Its own end is an `end`.
      expect(await back.request({ op: 'end' })).toMatchObject({ op: 'ended' });
      await waitFor(() => ended(ids.moved).length === 1, 5_000, 'the reconnected call ended by its client', 25);
      expect(ended(ids.moved)[0]!.data).toMatchObject({ reason: 'end' });
    }, 60_000);
  });
});
