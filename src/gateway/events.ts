import type { TemplatedApp } from 'uWebSockets.js';
import { badRequest } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { EventBus, MemgateEvent } from '../ports/event-bus.ts';
import { encodeFrame } from './codec.ts';
import type { GatewayMetrics } from './metrics.ts';

/**
 * Live events for dashboards. Every event on the EventBus (workers' and
 * gateways', this process's or others') is relayed to uWS pub/sub topics.
 * Client topics (`events`, `agent/<agentId>`, `user/<agentId>/<userId>`) are
 * mapped to internal names that start with the encoding and the JSON-quoted
 * tenant, so no topic string a client can send reaches another tenant.
 */

/** A client topic name, resolved to the internal uWS topic this connection subscribes to. */
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

/** Relays EventBus events to subscribed WebSockets, encoding each event once per encoding in use. */
export class EventRelay {
  private readonly subscribersByTenant = new Map<string, number>();
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly app: TemplatedApp,
    private readonly bus: EventBus,
    private readonly metrics: GatewayMetrics,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.unsubscribe = this.bus.subscribe((event) => {
      try {
        this.relay(event);
      } catch (err) {
        this.logger.warn('event relay failed', { err, type: event.type });
      }
    });
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** A connection of the tenant subscribed to its first topic (lets events of quiet tenants skip encoding). */
  addSubscriber(tenantId: string): void {
    this.subscribersByTenant.set(tenantId, (this.subscribersByTenant.get(tenantId) ?? 0) + 1);
  }

  /** That connection closed. */
  removeSubscriber(tenantId: string): void {
    const n = (this.subscribersByTenant.get(tenantId) ?? 1) - 1;
    if (n <= 0) this.subscribersByTenant.delete(tenantId);
    else this.subscribersByTenant.set(tenantId, n);
  }

  private relay(event: MemgateEvent): void {
    if (event.type === 'extraction.finished' && typeof event.data['durationMs'] === 'number') this.metrics.extraction.observe(event.data['durationMs']);
    if (event.type === 'extraction.failed') this.metrics.extractionFailures.inc();
    if (event.type === 'turn.quarantined') this.metrics.quarantined.inc();
    if (!this.subscribersByTenant.has(event.tenantId)) return;
    const clientTopics = ['events', `agent/${event.agentId}`, `user/${event.agentId}/${event.userId}`];
    let sent = false;
    for (const binary of [false, true]) {
      for (const topic of clientTopics) {
        const internal = internalTopic(event.tenantId, topic, binary);
        if (this.app.numSubscribers(internal) === 0) continue;
        // `topic` tells a socket on several matching topics which subscription delivered it.
        this.app.publish(internal, encodeFrame({ op: 'event', topic, event }, binary), binary);
        sent = true;
      }
    }
    if (sent) this.metrics.events.inc(event.type);
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
