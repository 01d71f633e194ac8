import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/real-server.ts';
import { WsTester, http, type Reply } from './support/ws-tester.ts';

/**
 * A real subscriber that stops reading while calls go on: the gateway skips its
 * events instead of buffering them without bound or slowing the calls, and when
 * it reads again it gets `dropped` notices that account for every skipped seq.
 */
let srv: TestServer;
beforeAll(async () => {
  // Event budget = a quarter of this (16 KiB).
  srv = await startTestServer({ config: { server: { maxBackpressureBytes: 64 * 1024 } } });
});
afterAll(() => srv.close());

describe('live events under backpressure', () => {
  it('a stalled subscriber gets dropped notices covering every missed seq; calls are not held up', async () => {
    const slow = await WsTester.open(srv.wsUrl);
    const TOPICS = ['events', 'agent/bp', 'user/bp/u'];
    await slow.request({ op: 'subscribe', topics: TOPICS });
    const socket = (slow.ws as unknown as { _socket: Socket })._socket;
    socket.pause();

    // With no worker running, this caller's backlog grows past the alert level: its extraction.backlog event is on the topics too.
    let backlogEvents = 0;
    srv.runtime.ports.events.subscribe((e) => void (e.type === 'extraction.backlog' && e.userId === 'u' && backlogEvents++));
    const caller = await WsTester.open(srv.wsUrl);
    await caller.request({ op: 'start', agentId: 'bp', userId: 'u' });
    // Enough events to fill the kernel's socket buffers and then the event budget.
    const text = 'x'.repeat(600);
    const N = 20_000;
    let acked = 0;
    for (let batch = 0; batch < N / 500; batch++) {
      for (let i = 0; i < 500; i++) caller.send({ op: 'append', id: `a${batch}-${i}`, role: 'user', text, turnId: `bp-${batch}-${i}` });
      const last = await caller.waitFor((r) => r['id'] === `a${batch}-499`, 20_000);
      expect(last['op']).toBe('ack');
      acked += 500;
      caller.inbox.length = 0;
    }
    expect(acked).toBe(N);
    const dropped = srv.gateway.metrics.eventsDropped.get();
    expect(dropped).toBeGreaterThan(0);

    socket.resume();
    // Probe until an event gets through: right after resuming, the kernel buffers are still full.
    let final: Reply | null = null;
    let probes = 0;
    while (!final && probes < 60) {
      const turnId = `bp-probe-${probes++}`;
      await caller.request({ op: 'append', role: 'user', text: 'probe', turnId });
      final = await slow.waitFor((r) => r['op'] === 'event' && r['topic'] === 'events' && (r['event'] as { data: { turnId?: string } }).data.turnId === turnId, 1000).catch(() => null);
    }
    if (!final) throw new Error('no event got through after the subscriber resumed');
    // Frames before the probe's own event; the probe went to the waiter.
    const frames: Reply[] = slow.inbox.filter((r) => r['op'] === 'dropped' || (r['op'] === 'event' && (r['topic'] !== 'events' || (r['seq'] as number) < (final!['seq'] as number))));
    frames.push(final);
    // Per topic, every seq from 1 to the last is either delivered or inside a dropped notice, in order.
    const expected = new Map(TOPICS.map((t) => [t, 1]));
    let notices = 0;
    let skipped = 0;
    for (const f of frames) {
      const topic = f['topic'] as string;
      if (f['op'] === 'dropped') {
        expect(f['fromSeq']).toBe(expected.get(topic));
        expect(f['toSeq']).toBe((f['fromSeq'] as number) + (f['count'] as number) - 1);
        expected.set(topic, (f['toSeq'] as number) + 1);
        notices++;
        skipped += f['count'] as number;
      } else {
        expect(f['seq']).toBe(expected.get(topic));
        expected.set(topic, expected.get(topic)! + 1);
      }
    }
    expect(notices).toBeGreaterThan(0);
    // Every skip before the resume was announced (later probes may still have theirs pending).
    expect(skipped).toBeGreaterThanOrEqual(dropped);
    expect(skipped).toBeLessThanOrEqual(srv.gateway.metrics.eventsDropped.get());
    // session.started + N appends + the backlog alert + the probes, on the topic that delivered the last probe.
    expect(backlogEvents).toBe(1);
    expect(expected.get('events')! - 1).toBe(N + 1 + backlogEvents + probes);
    expect(final['seq']).toBe(N + 1 + backlogEvents + probes);
    const metrics = await http(srv.base, 'GET', '/metrics');
    expect(metrics.body).toMatch(/memgate_events_dropped_total [1-9]/);
    await slow.close();
    await caller.close();
  }, 120_000);
});
