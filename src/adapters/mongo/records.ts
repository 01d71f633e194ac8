/**
 * The pure half of the MongoDB adapter: document shapes, deterministic ids, filters and update
 * documents, with no client and no I/O, so every query the adapter sends is unit-tested
 * without a server. Mongo-specific choices live here, not in the domain types:
 * - optional Turn fields are omitted, never stored as null, so a round-trip is exact;
 * - the profile map is stored as an array of entries: its keys are agent-defined field names,
 *   and MongoDB gives `.` and `$` in field names special meaning in queries and updates.
 */
import type { Filter, UpdateFilter } from 'mongodb';
import { stableHash } from '../../core/ids.ts';
import { withSeq } from '../../core/turn-fields.ts';
import type { ExtractionSchema } from '../../core/extraction-schema.ts';
import type { DeferredAcu, HotDocument, ProfileEntry, QuarantinedTurn, Scope, SessionSummary, TemporalEntity, Turn } from '../../core/types.ts';

/** Collection names inside the configured database. */
export const COLLECTIONS = { hot: 'hot', schemas: 'schemas', cold: 'cold_turns' } as const;

/** The three scope fields every record carries at top level (indexed). */
export interface ScopeFields {
  tenantId: string;
  agentId: string;
  userId: string;
}

/** One profile field as stored: the map key moved into `field`. */
export interface ProfileRecord extends ProfileEntry {
  field: string;
}

/** A `hot` collection document: one per agent+user. */
export interface HotRecord extends ScopeFields {
  _id: string;
  version: number;
  updatedAt: string;
  profile: ProfileRecord[];
  entities: TemporalEntity[];
  recent: Turn[];
  summaries: SessionSummary[];
  counters: HotDocument['counters'];
  quarantined?: QuarantinedTurn[];
  deferredAcus?: DeferredAcu[];
}

/** A `schemas` collection document: one per tenant+agent. */
export interface SchemaRecord {
  _id: string;
  tenantId: string;
  agentId: string;
  schema: ExtractionSchema;
}

/** Equality on the scope fields: the prefix of every compound index. */
export function scopeFilter(scope: Scope): ScopeFields {
  return { tenantId: scope.tenantId, agentId: scope.agentId, userId: scope.userId };
}

/** Deterministic `_id` of a user's hot document, so getHot is one `_id` lookup. */
export function hotId(scope: Scope): string {
  return 'hot:' + stableHash(scope.tenantId, scope.agentId, scope.userId);
}

/** Deterministic `_id` of an agent's schema. */
export function schemaId(tenantId: string, agentId: string): string {
  return 'schema:' + stableHash(tenantId, agentId);
}

/** A Turn with only the port's fields, optional ones left out when absent (null read back = absent). */
export function turnRecord(turn: Turn): Turn {
  return withSeq(turn, turn.seq);
}

function entityRecord(e: TemporalEntity): TemporalEntity {
  const rec: TemporalEntity = {
    id: e.id,
    key: e.key,
    field: e.field,
    value: e.value,
    category: e.category,
    status: e.status,
    source: e.source,
    validFrom: e.validFrom,
    validUntil: e.validUntil,
    recordedAt: e.recordedAt,
    expiresAt: e.expiresAt,
    supersedes: e.supersedes,
    supersededBy: e.supersededBy,
    evidence: [...e.evidence],
  };
  // Optional: records written before statement order existed have none (and BSON would store undefined as null).
  if (typeof e.statedAt === 'string') rec.statedAt = e.statedAt;
  return rec;
}

/** HotDocument → stored document. */
export function toHotRecord(doc: HotDocument): HotRecord {
  return {
    _id: hotId(doc.scope),
    ...scopeFilter(doc.scope),
    version: doc.version,
    updatedAt: doc.updatedAt,
    profile: Object.entries(doc.profile).map(([field, e]) => ({ field, value: e.value, updatedAt: e.updatedAt, source: e.source, evidence: [...e.evidence] })),
    entities: doc.entities.map(entityRecord),
    recent: doc.recent.map(turnRecord),
    summaries: doc.summaries.map((s) => ({ sessionId: s.sessionId, text: s.text, from: s.from, to: s.to })),
    counters: { ...doc.counters },
    ...(doc.quarantined ? { quarantined: doc.quarantined } : {}),
    ...(doc.deferredAcus ? { deferredAcus: doc.deferredAcus } : {}),
  };
}

/** Stored document → HotDocument. */
export function fromHotRecord(rec: HotRecord): HotDocument {
  const profile: Record<string, ProfileEntry> = {};
  for (const p of rec.profile) profile[p.field] = { value: p.value, updatedAt: p.updatedAt, source: p.source, evidence: p.evidence };
  return {
    scope: { tenantId: rec.tenantId, agentId: rec.agentId, userId: rec.userId },
    profile,
    entities: rec.entities.map(entityRecord),
    recent: rec.recent.map(turnRecord),
    summaries: rec.summaries,
    counters: rec.counters,
    ...(rec.quarantined ? { quarantined: rec.quarantined } : {}),
    ...(rec.deferredAcus ? { deferredAcus: rec.deferredAcus } : {}),
    version: rec.version,
    updatedAt: rec.updatedAt,
  };
}

/** Compare-and-set filter: matches only while the stored version is the one the writer read. */
export function casFilter(scope: Scope, expectedVersion: number): Filter<HotRecord> {
  return { _id: hotId(scope), version: expectedVersion };
}

/** The CAS update: every field but `_id` (immutable) set from the new document. */
export function casUpdate(record: HotRecord): UpdateFilter<HotRecord> {
  const { _id, ...fields } = record;
  return { $set: fields };
}

/**
 * Stored schema document of an agent. A schema is plain JSON data; the JSON round-trip drops
 * `undefined` optionals (`hints: undefined`), which BSON would otherwise store as null.
 */
export function toSchemaRecord(tenantId: string, agentId: string, schema: ExtractionSchema): SchemaRecord {
  return { _id: schemaId(tenantId, agentId), tenantId, agentId, schema: JSON.parse(JSON.stringify(schema)) as ExtractionSchema };
}
