/**
 * The shapes that cross the wire (replies and live events): owned by core so the
 * service, the ports and the client all speak them without depending on each other.
 */
import type { ContextFact, FactValue, SearchResult, SessionContext, SessionSummary, ToolDefinition } from './types.ts';

/** Session start reply body (docs/protocol.md `context`, without op/id). */
export interface ContextReply {
  sessionId: string;
  profile: Record<string, FactValue>;
  facts: ContextFact[];
  possibly: ContextFact[];
  recent: SessionContext['recent'];
  summaries: SessionSummary[];
  contextBlock: string;
  tools: ToolDefinition[];
  tookMs: number;
  /** Present (true) when the start reopened an ended call of the same agent and user. */
  reopened?: true;
}

/** Turn append reply body (docs/protocol.md `ack`). */
export interface AckReply {
  turnId: string;
  seq: number;
  duplicate: boolean;
}

/** Memory search reply body (docs/protocol.md `results`). */
export interface SearchReply {
  results: SearchResult[];
  tookMs: number;
  /** Present and true when `deadlineMs` cut a tier. */
  partial?: boolean;
}

export type MemgateEventType =
  | 'turn.appended'
  | 'turn.duplicate'
  | 'extraction.started'
  | 'extraction.finished'
  | 'extraction.failed'
  | 'extraction.backlog'
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
