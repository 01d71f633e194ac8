/**
 * memgate's data model (docs/design.md section 4). Plain data only: every port and
 * adapter speaks these shapes, so they carry no behaviour and no I/O.
 * Times: epoch milliseconds in fields named `*Ms` or `ts`/`receivedAt`, ISO-8601 strings elsewhere.
 */

/** Every record is scoped tenant → agent → user. */
export interface Scope {
  readonly tenantId: string;
  readonly agentId: string;
  readonly userId: string;
}

export type Role = 'user' | 'agent' | 'system' | 'tool';
export const ROLES: readonly Role[] = ['user', 'agent', 'system', 'tool'];

/** What a client sends to append a turn (already validated at the edge). */
export interface TurnInput {
  role: Role;
  text: string;
  /** Client idempotency key; the server makes one when absent. */
  turnId?: string;
  /** When the turn was said, epoch ms (defaults to receipt time). */
  ts?: number;
  speaker?: string;
  /** Speech recogniser confidence 0–1 for a user turn. */
  asrConfidence?: number;
  /** Agent turn cut off by barge-in: `text` is what the caller heard. */
  interrupted?: boolean;
}

/** A turn as stored in the hot buffer and the cold archive. */
export interface Turn {
  turnId: string;
  /** Monotonic per agent+user buffer, starting at 1. */
  seq: number;
  sessionId: string;
  role: Role;
  text: string;
  ts: number;
  receivedAt: number;
  tokens: number;
  speaker?: string;
  asrConfidence?: number;
  interrupted?: boolean;
}

export type Category = 'profile' | 'temporal' | 'ephemeral';
export type FactSource = 'explicit' | 'confirmed' | 'inferred';
/**
 * `superseded`: the value changed later in world time (validUntil = the new value's validFrom).
 * `retracted`: a later statement corrected it (it never held, or its start was wrong).
 * `expired` is not stored: it is an active ephemeral record past `expiresAt`.
 */
export type EntityStatus = 'active' | 'superseded' | 'retracted';

/** A money amount keeps its currency (docs/protocol.md, extraction schema types). */
export interface Money {
  amount: number;
  currency: string;
}

/** A normalised field value: dates and datetimes are ISO-8601 strings. */
export type FactValue = string | number | boolean | Money;

/** One record of the bi-temporal timeline (temporal, ephemeral, and profile history). */
export interface TemporalEntity {
  id: string;
  /** Stable entity key: the field, or `field:qualifier` when the field has `keyBy`. */
  key: string;
  field: string;
  value: FactValue;
  category: Category;
  status: EntityStatus;
  source: FactSource;
  /** World time the fact became true (ISO). */
  validFrom: string;
  /** World time it stopped being true; null while active. */
  validUntil: string | null;
  /** System time of extraction (ISO). */
  recordedAt: string;
  /** When the statement was said (ISO, its evidence turn's time): the newest statement is current truth. Absent on records written before it existed. */
  statedAt?: string;
  /** Ephemeral only: hidden from context after this instant, never deleted. */
  expiresAt: string | null;
  supersedes: string | null;
  supersededBy: string | null;
  /** Turn ids the fact was drawn from. */
  evidence: string[];
}

/** Current value of a profile field (last write wins; history lives in the timeline). */
export interface ProfileEntry {
  value: FactValue;
  updatedAt: string;
  source: FactSource;
  evidence: string[];
}

/** A short per-session summary kept in the hot document. */
export interface SessionSummary {
  sessionId: string;
  text: string;
  /** World time of the session's first summarised turn (ISO). */
  from: string;
  to: string;
}

/** The per agent+user hot document (tier 1). */
export interface HotDocument {
  scope: Scope;
  profile: Record<string, ProfileEntry>;
  /** Temporal, ephemeral and profile-history records; append-only except forget. */
  entities: TemporalEntity[];
  /** Turns Smart Keep kept (they also remain in the turn buffer until compressed). */
  recent: Turn[];
  summaries: SessionSummary[];
  counters: { extractions: number; turnsArchived: number; acusIndexed: number; acusSuppressed: number };
  /** Stored turns extraction could not process, newest last (bounded); absent when there never were any. */
  quarantined?: QuarantinedTurn[];
  /**
   * ACUs a run made while the lane was behind, indexed with the embedder's cheap vector and
   * waiting for the full one (pipeline/deferred-acus.ts), oldest first (bounded); absent when none.
   */
  deferredAcus?: DeferredAcu[];
  /** Optimistic-concurrency version: every commit must name the version it read. */
  version: number;
  updatedAt: string;
}

/**
 * A buffered turn taken out of extraction because it cannot be processed (it
 * would fail every run of its user). Its fields are kept as far as they are
 * plain values, so an operator can see what came in and why it was set aside.
 */
export interface QuarantinedTurn {
  turnId: string;
  reason: string;
  /** System time it was quarantined (ISO). */
  quarantinedAt: string;
  /** The stored turn, each field a JSON-safe copy (non-finite numbers become null, text cut at 2,000 characters). */
  turn: Record<string, string | number | boolean | null>;
}

/** Atomic Context Unit: a self-contained fact in the vector index (tier 2). */
export interface Acu {
  /** Deterministic from scope + contentHash, so a re-delivered job never duplicates. */
  id: string;
  text: string;
  embedding: Float32Array;
  turnRefs: string[];
  sessionId: string;
  /** World time the fact refers to (ISO). */
  validAt: string;
  createdAt: string;
  contentHash: string;
}

/** An indexed ACU whose vector is the embedder's cheap one: what re-embedding it needs. */
export type DeferredAcu = Omit<Acu, 'embedding'>;

/** A fact as shown to the agent in `facts` / `possibly`. */
export interface ContextFact {
  key: string;
  field: string;
  value: FactValue;
  source: FactSource;
  validFrom: string;
  recordedAt: string;
}

/** The `memory_search` tool definition (OpenAI function-calling format). */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** What the preloaded context cache holds: everything session start returns but the per-call ids. */
export interface SessionContext {
  profile: Record<string, FactValue>;
  facts: ContextFact[];
  possibly: ContextFact[];
  /** Verbatim turns; `outdated` when a turn states a value that no longer holds. */
  recent: Array<Pick<Turn, 'turnId' | 'role' | 'text' | 'ts' | 'speaker' | 'interrupted'> & { outdated?: OutdatedMark[] }>;
  summaries: SessionSummary[];
  contextBlock: string;
  tools: ToolDefinition[];
  /** Hot document version it was built from. */
  version: number;
  /** Instant it was built (epoch ms): ephemeral facts past expiry are filtered on read. */
  builtAt: number;
  /** Earliest ephemeral expiry in it (epoch ms), so a read can tell when it must rebuild. */
  expiresAt: number | null;
}

/**
 * A SessionContext as the context cache holds it: the reply fields already
 * serialised as one UTF-8 JSON object, so a session start splices bytes into
 * its reply instead of decoding and re-encoding ~15 KB on every call.
 */
export interface EncodedContext {
  version: number;
  builtAt: number;
  expiresAt: number | null;
  /** `{"profile":…,"facts":…,"possibly":…,"recent":…,"summaries":…,"contextBlock":…,"tools":…}` */
  json: Uint8Array;
}

export type Confidence = 'high' | 'medium' | 'low';
/** `fact`: a structured fact; `recent`: a kept or buffered turn; `acu`/`hybrid`: the vector index; `cold`: archived raw turns. */
export type ResultSource = 'fact' | 'recent' | 'acu' | 'hybrid' | 'cold';

/** The structured fact behind a `fact` search result (docs/protocol.md). */
export interface ResultFact {
  key: string;
  field: string;
  value: FactValue;
  status: EntityStatus | 'expired';
  source: FactSource;
  validFrom: string;
  validUntil: string | null;
}

/** Marks a result whose text states a value that has since been superseded or retracted; `now` is the current value or null. */
export interface OutdatedMark {
  key: string;
  now: FactValue | null;
}

/** One memory_search result (docs/protocol.md). */
export interface SearchResult {
  text: string;
  score: number;
  confidence: Confidence;
  source: ResultSource;
  turnRefs: string[];
  validAt: string;
  fact?: ResultFact;
  outdated?: OutdatedMark;
}
