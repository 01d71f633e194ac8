/** Dashboard event types (README protocol section documents the shapes). */
import type { MemgateEvent, MemgateEventType } from '../core/wire.ts';

export type { MemgateEvent, MemgateEventType };

/** Fan-out of live events from workers to gateways (and on to dashboards). Fire and forget. */
export interface EventBus {
  publish(event: MemgateEvent): void;
  /** Returns an unsubscribe function. */
  subscribe(handler: (event: MemgateEvent) => void): () => void;
  close(): Promise<void>;
}
