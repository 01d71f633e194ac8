import { silentLogger, type Logger } from '../../core/logger.ts';
import type { EventBus, MemgateEvent } from '../../ports/event-bus.ts';

type Subscriber = (event: MemgateEvent) => void;

/**
 * The embedded event bus: synchronous fan-out to every subscriber in
 * subscription order. A throwing subscriber is logged and skipped; it never
 * stops delivery to the others nor reaches the publisher.
 */
export class InProcessEventBus implements EventBus {
  private readonly subscribers = new Set<Subscriber>();
  private readonly log: Logger;

  constructor(options: { logger?: Logger } = {}) {
    this.log = (options.logger ?? silentLogger).child({ component: 'event-bus' });
  }

  publish(event: MemgateEvent): void {
    // Iterate a snapshot: a subscriber may unsubscribe (itself or others) while handling.
    for (const subscriber of [...this.subscribers]) {
      try {
        subscriber(event);
      } catch (err) {
        this.log.warn('event subscriber threw', { type: event.type, err });
      }
    }
  }

  subscribe(handler: Subscriber): () => void {
    // Wrapped so the same function subscribed twice gets two independent subscriptions.
    const subscription: Subscriber = (event) => handler(event);
    this.subscribers.add(subscription);
    return () => {
      this.subscribers.delete(subscription);
    };
  }

  async close(): Promise<void> {
    this.subscribers.clear();
  }
}
