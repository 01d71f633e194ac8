/** Dashboard event types (README protocol section documents the shapes). */
export type MemgateEventType =
  | 'turn.appended'
  | 'extraction.started'
  | 'extraction.finished'
  | 'extraction.failed'
  | 'fact.superseded'
  | 'fact.retracted'
  | 'acus.indexed'
  | 'turn.quarantined'
  | 'session.started'
  | 'session.ended';

/** One live event. `data` carries ids and counts, never raw user text. */
export interface MemgateEvent {
  type: MemgateEventType;
  tenantId: string;
  agentId: string;
  userId: string;
  sessionId?: string;
  at: number;
  data: Record<string, unknown>;
}

/** Fan-out of live events from workers to gateways (and on to dashboards). Fire and forget. */
export interface EventBus {
  publish(event: MemgateEvent): void;
  /** Returns an unsubscribe function. */
  subscribe(handler: (event: MemgateEvent) => void): () => void;
  close(): Promise<void>;
}
