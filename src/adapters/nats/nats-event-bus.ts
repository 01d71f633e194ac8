import type { NatsConnection, Subscription } from 'nats';
import { silentLogger, type Logger } from '../../core/logger.ts';
import type { EventBus, MemgateEvent } from '../../ports/event-bus.ts';
import { assertSubjectPrefix, subjectToken } from './subjects.ts';

const encoder = new TextEncoder();

/** Options of {@link NatsEventBus}. */
export interface NatsEventBusOptions {
  logger?: Logger;
}

/**
 * EventBus on core NATS: events are JSON on `<prefix>.events.<tenant>` (so a
 * dashboard can subscribe to one tenant), every gateway subscribes to
 * `<prefix>.events.>`. At-most-once, like the dashboards that consume them:
 * no JetStream, nothing stored. The connection belongs to the caller.
 */
export class NatsEventBus implements EventBus {
  private readonly subscriptions = new Set<Subscription>();
  private readonly log: Logger;

  constructor(
    private readonly nc: NatsConnection,
    private readonly subjectPrefix = 'memgate',
    options: NatsEventBusOptions = {},
  ) {
    assertSubjectPrefix(subjectPrefix);
    this.log = (options.logger ?? silentLogger).child({ component: 'event-bus' });
  }

  /** Fire and forget: a closed or reconnecting connection drops or buffers the event, never throws. */
  publish(event: MemgateEvent): void {
    try {
      this.nc.publish(`${this.subjectPrefix}.events.${subjectToken(event.tenantId)}`, encoder.encode(JSON.stringify(event)));
    } catch (err) {
      this.log.warn('event publish failed', { type: event.type, err });
    }
  }

  subscribe(handler: (event: MemgateEvent) => void): () => void {
    const sub = this.nc.subscribe(`${this.subjectPrefix}.events.>`, {
      callback: (err, msg) => {
        if (err) return;
        try {
          handler(msg.json<MemgateEvent>());
        } catch (e) {
          this.log.warn('event subscriber threw', { err: e });
        }
      },
    });
    this.subscriptions.add(sub);
    return () => {
      if (!this.subscriptions.delete(sub)) return;
      if (!this.nc.isClosed()) sub.unsubscribe();
    };
  }

  async close(): Promise<void> {
    for (const sub of this.subscriptions) if (!this.nc.isClosed()) sub.unsubscribe();
    this.subscriptions.clear();
  }
}
