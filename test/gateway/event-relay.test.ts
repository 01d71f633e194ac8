import { unpack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { InProcessEventBus } from '../../src/adapters/inprocess/event-bus.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { EventRelay, type EventSocket, type Subscriptions } from '../../src/gateway/events.ts';
import { GatewayMetrics } from '../../src/gateway/metrics.ts';
import type { MemgateEvent } from '../../src/ports/event-bus.ts';

/** A socket whose send buffer the test fills and drains by hand. */
class FakeSocket implements EventSocket {
  buffered = 0;
  frames: Record<string, unknown>[] = [];
  send(message: string | Uint8Array, isBinary: boolean): number {
    this.frames.push(isBinary ? (unpack(message as Uint8Array) as Record<string, unknown>) : JSON.parse(message as string));
    return 1;
  }
  getBufferedAmount(): number {
    return this.buffered;
  }
  corks = 0;
  cork(cb: () => void): void {
    this.corks++;
    cb();
  }
}

const ev = (i: number, over: Partial<MemgateEvent> = {}): MemgateEvent => ({ type: 'turn.appended', tenantId: 'T', agentId: 'a', userId: 'u', sessionId: 's', at: i, data: { seq: i }, ...over });

function setup() {
  const bus = new InProcessEventBus();
  const metrics = new GatewayMetrics();
  const relay = new EventRelay(bus, metrics, silentLogger, 1000);
  relay.start();
  return { bus, metrics, relay };
}

describe('EventRelay: per-subscription seq and dropped notices', () => {
  it('numbers each subscription on its own, in both encodings', () => {
    const { bus, relay } = setup();
    const ws = new FakeSocket();
    const subs: Subscriptions = new Map();
    relay.subscribe(ws, subs, 'T', ['events'], false);
    bus.publish(ev(1));
    relay.subscribe(ws, subs, 'T', ['user/a/u'], true);
    bus.publish(ev(2));
    relay.flush();
    expect(ws.frames).toEqual([
      { op: 'event', topic: 'events', seq: 1, event: ev(1) },
      { op: 'event', topic: 'events', seq: 2, event: ev(2) },
      { op: 'event', topic: 'user/a/u', seq: 1, event: ev(2) },
    ]);
  });

  it('a subscriber over its send budget skips events, then hears the gap before its next event; others are not affected', () => {
    const { bus, relay, metrics } = setup();
    const slow = new FakeSocket();
    const fast = new FakeSocket();
    const slowSubs: Subscriptions = new Map();
    relay.subscribe(slow, slowSubs, 'T', ['events'], false);
    relay.subscribe(fast, new Map(), 'T', ['events'], false);
    bus.publish(ev(1));
    slow.buffered = 5000;
    for (let i = 2; i <= 6; i++) bus.publish(ev(i));
    slow.buffered = 0;
    bus.publish(ev(7));
    relay.flush();
    expect(slow.frames.map((f) => f['op'] + ':' + (f['seq'] ?? f['count']))).toEqual(['event:1', 'dropped:5', 'event:7']);
    expect(slow.frames[1]).toEqual({ op: 'dropped', topic: 'events', count: 5, fromSeq: 2, toSeq: 6 });
    expect(fast.frames.map((f) => f['seq'])).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(metrics.eventsDropped.get()).toBe(5);
    expect(metrics.render(null)).toContain('memgate_events_dropped_total 5');
  });

  it('a drained socket hears of its gap at once (msgpack subscriber)', () => {
    const { bus, relay } = setup();
    const ws = new FakeSocket();
    const subs: Subscriptions = new Map();
    relay.subscribe(ws, subs, 'T', ['agent/a'], true);
    ws.buffered = 5000;
    bus.publish(ev(1));
    bus.publish(ev(2));
    relay.drained(subs);
    expect(ws.frames).toEqual([]);
    ws.buffered = 10;
    relay.drained(subs);
    expect(ws.frames).toEqual([{ op: 'dropped', topic: 'agent/a', count: 2, fromSeq: 1, toSeq: 2 }]);
    bus.publish(ev(3));
    relay.flush();
    expect(ws.frames[1]).toMatchObject({ op: 'event', seq: 3 });
  });

  it('a send uWS drops (status 2) counts as a gap too', () => {
    const { bus, relay } = setup();
    const ws = new FakeSocket();
    let refuse = true;
    const send = ws.send.bind(ws);
    ws.send = (m, b) => (refuse ? 2 : send(m, b));
    relay.subscribe(ws, new Map(), 'T', ['events'], false);
    bus.publish(ev(1));
    relay.flush();
    refuse = false;
    bus.publish(ev(2));
    relay.flush();
    expect(ws.frames).toEqual([
      { op: 'dropped', topic: 'events', count: 1, fromSeq: 1, toSeq: 1 },
      { op: 'event', topic: 'events', seq: 2, event: ev(2) },
    ]);
  });

  it('events of one tick go out in one cork per socket, on the next microtask; a refused send drops the rest of the batch as one announced gap', async () => {
    const { bus, relay } = setup();
    const ws = new FakeSocket();
    relay.subscribe(ws, new Map(), 'T', ['events', 'agent/a'], false);
    for (let i = 1; i <= 3; i++) bus.publish(ev(i));
    expect(ws.frames).toEqual([]);
    await Promise.resolve();
    expect(ws.corks).toBe(1);
    expect(ws.frames.map((f) => `${f['topic']}#${f['seq']}`)).toEqual(['events#1', 'agent/a#1', 'events#2', 'agent/a#2', 'events#3', 'agent/a#3']);
    ws.frames = [];
    let n = 0;
    const send = FakeSocket.prototype.send.bind(ws);
    ws.send = (m, b) => (++n === 2 ? 2 : send(m, b));
    for (let i = 4; i <= 6; i++) bus.publish(ev(i));
    relay.flush();
    bus.publish(ev(7));
    relay.flush();
    expect(ws.frames.map((f) => (f['op'] === 'event' ? `${f['topic']}#${f['seq']}` : `${f['topic']} dropped ${f['fromSeq']}-${f['toSeq']}`))).toEqual([
      'events#4',
      'events dropped 5-6',
      'events#7',
      'agent/a dropped 4-6',
      'agent/a#7',
    ]);
  });

  it('tenants and topics stay apart; unsubscribe and close forget the subscription', () => {
    const { bus, relay } = setup();
    const ws = new FakeSocket();
    const subs: Subscriptions = new Map();
    relay.subscribe(ws, subs, 'T', ['events', 'user/a/other'], false);
    bus.publish(ev(1, { tenantId: 'U' }));
    expect(ws.frames).toEqual([]);
    expect(() => relay.subscribe(ws, subs, 'T', ['events', 'nope'], false)).toThrow(/unknown topic/);
    relay.unsubscribeTopics(subs, 'T', ['events']);
    bus.publish(ev(2));
    expect(ws.frames).toEqual([]);
    relay.removeAll(subs);
    expect(relay.size).toBe(0);
    expect(subs.size).toBe(0);
  });
});
