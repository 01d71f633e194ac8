import { badRequest } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { EventBus, MemgateEvent } from '../ports/event-bus.ts';
import { encodeFrame } from './codec.ts';
import type { GatewayMetrics } from './metrics.ts';

/**
 * Live events for dashboards. Every event on the EventBus (workers' and
 * gateways', this process's or others') is sent to the WebSockets subscribed to
 * one of its client topics (`events`, `agent/<agentId>`,
 * `user/<agentId>/<userId>`). Topics are keyed by the JSON-quoted tenant, so no
 * topic string a client can send reaches another tenant.
 *
 * Each subscription numbers its events (`seq`, 1, 2, ...). The relay sends per
 * socket rather than through uWS publish, because publish cannot tell which
 * socket dropped a frame: a subscriber whose send buffer is over the event
 * budget skips events (their seq is used up), and before its next event it gets
 * `{op:"dropped", topic, count, fromSeq, toSeq}`, so a gap is never silent.
 */

/** A client topic name, resolved to the internal key of that tenant's topic (the encoding only when `binary` matters). */
export function internalTopic(tenantId: string, topic: string, binary: boolean): string {
  const prefix = (binary ? 'm' : 'j') + JSON.stringify(tenantId);
  if (topic === 'events') return prefix + 'e';
  if (topic.startsWith('agent/') && topic.length > 6) return prefix + 'a' + topic.slice(6);
  if (topic.startsWith('user/')) {
    // The agent id ends at the first slash; the user id may contain slashes.
    const slash = topic.indexOf('/', 5);
    if (slash > 5 && slash < topic.length - 1) return prefix + 'u' + JSON.stringify([topic.slice(5, slash), topic.slice(slash + 1)]);
  }
  throw badRequest(`unknown topic "${topic}": use events, agent/<agentId> or user/<agentId>/<userId>`);
}

/** What the relay needs of a WebSocket (uWS's `send` status: 1 sent, 0 buffered under backpressure, 2 dropped). */
export interface EventSocket {
  send(message: string | Uint8Array, isBinary: boolean): number;
  getBufferedAmount(): number;
  /** Run `cb` with sends batched into one write. */
  cork(cb: () => void): unknown;
}

/** One topic of one connection. */
export interface Subscription {
  readonly ws: EventSocket;
  readonly topic: string;
  readonly key: string;
  /** Encoding of the subscribe request: events follow it. */
  binary: boolean;
  /** seq of the last event of this subscription (delivered or dropped). */
  seq: number;
  /** Events skipped since the last delivered one (announced by a `dropped` notice). */
  dropped: number;
}

/** A connection's subscriptions by client topic. */
export type Subscriptions = Map<string, Subscription>;

/** Sends EventBus events to subscribed WebSockets with per-subscription seq numbers and drop notices. */
export class EventRelay {
  private readonly byKey = new Map<string, Set<Subscription>>();
  private unsubscribe: (() => void) | null = null;
  private readonly listeners: ((event: MemgateEvent) => void)[] = [];
  /** Frames waiting for this tick's corked send, per socket. */
  private readonly queues = new Map<EventSocket, { items: Array<{ sub: Subscription; seq: number; frame: string | Uint8Array; gap: number }>; bytes: number }>();
  private scheduled = false;

  /**
   * @param eventBufferBytes a subscriber whose socket holds more unsent bytes than this skips
   *   events until it drains (kept well under the reply backpressure limit, so events never
   *   make a call's own replies wait or get refused).
   */
  constructor(
    private readonly bus: EventBus,
    private readonly metrics: GatewayMetrics,
    private readonly logger: Logger,
    private readonly eventBufferBytes: number,
  ) {}

  start(): void {
    this.unsubscribe = this.bus.subscribe((event) => {
      try {
        this.relay(event);
      } catch (err) {
        this.logger.warn('event relay failed', { err, type: event.type });
      }
      for (const l of this.listeners) {
        try {
          l(event);
        } catch (err) {
          this.logger.warn('event listener failed', { err, type: event.type });
        }
      }
    });
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** Also hand every bus event to `fn` (the gateway's live state), after relaying it. */
  onEvent(fn: (event: MemgateEvent) => void): void {
    this.listeners.push(fn);
  }

  /** Subscribe a connection to client topics (all resolved first, so a bad one subscribes none). Returns the topics. */
  subscribe(ws: EventSocket, subs: Subscriptions, tenantId: string, topics: readonly string[], binary: boolean): void {
    const keys = topics.map((t) => internalTopic(tenantId, t, false));
    topics.forEach((topic, i) => {
      const existing = subs.get(topic);
      if (existing) {
        existing.binary = binary;
        return;
      }
      const sub: Subscription = { ws, topic, key: keys[i]!, binary, seq: 0, dropped: 0 };
      subs.set(topic, sub);
      let set = this.byKey.get(sub.key);
      if (!set) this.byKey.set(sub.key, (set = new Set()));
      set.add(sub);
    });
  }

  /** Drop a connection's subscriptions to `topics` (validated; unknown ones are ignored). */
  unsubscribeTopics(subs: Subscriptions, tenantId: string, topics: readonly string[]): void {
    for (const t of topics) internalTopic(tenantId, t, false);
    for (const t of topics) {
      const sub = subs.get(t);
      if (sub) this.remove(subs, sub);
    }
  }

  /** The connection closed: forget all its subscriptions. */
  removeAll(subs: Subscriptions): void {
    for (const sub of [...subs.values()]) this.remove(subs, sub);
  }

  /** The socket drained: announce pending gaps now rather than at the next event. */
  drained(subs: Subscriptions): void {
    for (const sub of subs.values()) {
      // With frames of its own still queued, the next of them carries the notice.
      if (sub.dropped > 0 && !this.queues.has(sub.ws) && sub.ws.getBufferedAmount() <= this.eventBufferBytes) this.notice(sub, sub.seq);
    }
  }

  /** Number of subscriptions (tests, metrics). */
  get size(): number {
    let n = 0;
    for (const s of this.byKey.values()) n += s.size;
    return n;
  }

  private remove(subs: Subscriptions, sub: Subscription): void {
    subs.delete(sub.topic);
    const set = this.byKey.get(sub.key);
    if (!set) return;
    set.delete(sub);
    if (set.size === 0) this.byKey.delete(sub.key);
  }

  /** Relay one event: frames are queued per socket and sent corked on the next microtask (one write for a batch). */
  relay(event: MemgateEvent): void {
    if (event.type === 'extraction.finished') this.observeRun(event.data);
    if (event.type === 'extraction.failed') this.metrics.extractionFailures.inc();
    if (event.type === 'turn.quarantined') this.metrics.quarantined.inc();
    if (this.byKey.size === 0) return;
    let json: string | null = null;
    let queued = false;
    for (const topic of ['events', `agent/${event.agentId}`, `user/${event.agentId}/${event.userId}`]) {
      const set = this.byKey.get(internalTopic(event.tenantId, topic, false));
      if (!set) continue;
      const topicJson = JSON.stringify(topic);
      for (const sub of set) {
        const seq = ++sub.seq;
        let q = this.queues.get(sub.ws);
        if (sub.ws.getBufferedAmount() + (q?.bytes ?? 0) > this.eventBufferBytes) {
          this.drop(sub);
          continue;
        }
        let frame: string | Uint8Array;
        if (sub.binary) frame = encodeFrame({ op: 'event', topic, seq, event }, true);
        else {
          // Serialised once per event; the per-subscription fields are spliced around it.
          json ??= JSON.stringify(event);
          frame = `{"op":"event","topic":${topicJson},"seq":${seq},"event":${json}}`;
        }
        if (!q) this.queues.set(sub.ws, (q = { items: [], bytes: 0 }));
        // The gap before this event is announced right before it.
        q.items.push({ sub, seq, frame, gap: sub.dropped });
        q.bytes += frame.length;
        sub.dropped = 0;
        queued = true;
      }
    }
    if (queued) {
      this.metrics.events.inc(event.type);
      if (!this.scheduled) {
        this.scheduled = true;
        queueMicrotask(this.flush);
      }
    }
  }

  /**
   * Send what `relay` queued, each socket's frames in one cork. A send uWS refuses
   * (status 2) drops the rest of that socket's batch too, so every gap stays one
   * contiguous run of seqs that the next notice announces.
   */
  readonly flush = (): void => {
    this.scheduled = false;
    if (this.queues.size === 0) return;
    const queues = [...this.queues];
    this.queues.clear();
    for (const [ws, q] of queues) {
      const sendAll = () => {
        let failed = false;
        for (const it of q.items) {
          if (!failed && it.gap > 0 && !this.sendTo(it.sub, this.noticeFrame(it.sub, it.gap, it.seq - 1))) failed = true;
          if (!failed && this.sendTo(it.sub, it.frame)) continue;
          failed = true;
          it.sub.dropped += it.gap + 1;
          this.metrics.eventsDropped.inc();
        }
      };
      try {
        ws.cork(sendAll);
      } catch {
        // Closed meanwhile (cork throws on a closed uWS socket): its close handler removes the subscriptions.
      }
    }
  };

  private observeRun(data: Record<string, unknown>): void {
    if (typeof data['durationMs'] === 'number') this.metrics.extraction.observe(data['durationMs']);
    const count = (key: string) => (typeof data[key] === 'number' ? data[key] : 0);
    this.metrics.archived.inc('', count('turnsArchived'));
    this.metrics.acus.inc('full', count('acusIndexed') - count('acusDeferred'));
    this.metrics.acus.inc('lexical', count('acusDeferred'));
    this.metrics.acusUpgraded.inc('', count('acusUpgraded'));
    const stages = data['stageMs'] as Record<string, unknown> | undefined;
    if (typeof stages !== 'object' || stages === null) return;
    for (const [name, h] of Object.entries(this.metrics.extractionStages)) if (typeof stages[name] === 'number') h.observe(stages[name]);
  }

  private drop(sub: Subscription): void {
    sub.dropped++;
    this.metrics.eventsDropped.inc();
  }

  private noticeFrame(sub: Subscription, count: number, toSeq: number): string | Uint8Array {
    return encodeFrame({ op: 'dropped', topic: sub.topic, count, fromSeq: toSeq - count + 1, toSeq }, sub.binary);
  }

  /** Announce the subscription's skipped events up to `toSeq` now; true when the notice went out. */
  private notice(sub: Subscription, toSeq: number): boolean {
    if (!this.sendTo(sub, this.noticeFrame(sub, sub.dropped, toSeq))) return false;
    sub.dropped = 0;
    return true;
  }

  private sendTo(sub: Subscription, frame: string | Uint8Array): boolean {
    try {
      return sub.ws.send(frame, sub.binary) !== 2;
    } catch {
      // Closed meanwhile: its close handler removes the subscription.
      return false;
    }
  }
}

/**
 * Events the gateway itself raises (turn.appended, session.*), published to the
 * EventBus after the reply is on its way: batched on setImmediate so the append
 * callback does nothing but validate, write and ack.
 */
export class EventOutbox {
  private queue: MemgateEvent[] = [];
  private scheduled = false;

  constructor(
    private readonly bus: EventBus,
    private readonly logger: Logger,
  ) {}

  push(event: MemgateEvent): void {
    this.queue.push(event);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  /** Publish everything queued (also called at shutdown). */
  readonly flush = (): void => {
    this.scheduled = false;
    const q = this.queue;
    this.queue = [];
    for (const e of q) {
      try {
        this.bus.publish(e);
      } catch (err) {
        this.logger.warn('event publish failed', { err, type: e.type });
      }
    }
  };
}
