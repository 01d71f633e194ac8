/**
 * The pure half of the Qdrant ACU index: point ids, payloads, filters and request bodies, with
 * no client and no I/O, so every shape the adapter sends is unit-tested without a server.
 * Request shapes follow the Qdrant HTTP API as typed by @qdrant/js-client-rest 1.18.
 */
import type { Schemas } from '@qdrant/js-client-rest';
import { MemgateError } from '../../core/errors.ts';
import { stableUuid } from '../../core/ids.ts';
import type { Acu, Scope } from '../../core/types.ts';

/** Most payloads the BM25 leg scrolls per query (the paper's "≤1,000 scrolled payloads"). */
export const KEYWORD_SCROLL_LIMIT = 1000;

/** Points per upsert request: keeps a request of 1,536-d vectors to a few MB of JSON. */
export const UPSERT_BATCH = 128;

/** What the collection is created with when missing: one unnamed vector, cosine distance. */
export function collectionConfig(dimensions: number): Schemas['CreateCollection'] {
  return { vectors: { size: dimensions, distance: 'Cosine' } };
}

/**
 * Payload indexes made at start-up: keyword indexes on the three scope fields every request
 * filters by, and an integer index on `createdAtMs`, which Qdrant requires for `order_by`
 * (the BM25 leg scrolls the newest ACUs first).
 */
export const PAYLOAD_INDEXES: ReadonlyArray<Schemas['CreateFieldIndex']> = [
  { field_name: 'tenantId', field_schema: 'keyword' },
  { field_name: 'agentId', field_schema: 'keyword' },
  { field_name: 'userId', field_schema: 'keyword' },
  { field_name: 'createdAtMs', field_schema: 'integer' },
];

/**
 * Why an existing collection cannot hold these ACUs, or null when it can: it must have one
 * unnamed cosine vector of the configured size (named vectors would need `using` everywhere).
 */
export function collectionProblem(info: Pick<Schemas['CollectionInfo'], 'config'>, dimensions: number): string | null {
  const vectors = info.config.params.vectors;
  if (vectors === undefined || typeof vectors.size !== 'number') return 'it has no single unnamed vector';
  if (vectors.size !== dimensions) return `its vectors have ${String(vectors.size)} dimensions, the embedder makes ${dimensions}`;
  if (vectors.distance !== 'Cosine') return `its distance is ${String(vectors.distance)}, not Cosine`;
  return null;
}

/** Payload indexes of `PAYLOAD_INDEXES` the collection does not have yet. */
export function missingPayloadIndexes(info: Pick<Schemas['CollectionInfo'], 'payload_schema'>): Array<Schemas['CreateFieldIndex']> {
  return PAYLOAD_INDEXES.filter((ix) => info.payload_schema[ix.field_name] === undefined);
}

/** The payload stored with every point: all ACU fields but the embedding, plus the scope. */
export interface AcuPayload {
  tenantId: string;
  agentId: string;
  userId: string;
  /** The ACU's own id: point ids are UUIDs derived from it, so the original is kept here. */
  acuId: string;
  text: string;
  turnRefs: string[];
  sessionId: string;
  validAt: string;
  createdAt: string;
  /** `createdAt` as epoch ms, for `order_by` (0 when `createdAt` does not parse). */
  createdAtMs: number;
  contentHash: string;
}

/**
 * Qdrant point ids must be UUIDs or unsigned integers, and ACU ids are free-form strings. The
 * id is always derived from scope + ACU id (even when the ACU id already is a UUID) so one
 * user's upsert can never overwrite another user's point; the original id lives in the payload.
 */
export function pointId(scope: Scope, acuId: string): string {
  return stableUuid('acu', scope.tenantId, scope.agentId, scope.userId, acuId);
}

/** `must` match on the three scope fields: every read, count and delete is confined to one user. */
export function scopeFilter(scope: Scope): Schemas['Filter'] {
  return {
    must: [
      { key: 'tenantId', match: { value: scope.tenantId } },
      { key: 'agentId', match: { value: scope.agentId } },
      { key: 'userId', match: { value: scope.userId } },
    ],
  };
}

/** Payload of an ACU within a scope. */
export function acuPayload(scope: Scope, acu: Acu): AcuPayload {
  const createdAtMs = Date.parse(acu.createdAt);
  return {
    tenantId: scope.tenantId,
    agentId: scope.agentId,
    userId: scope.userId,
    acuId: acu.id,
    text: acu.text,
    turnRefs: [...acu.turnRefs],
    sessionId: acu.sessionId,
    validAt: acu.validAt,
    createdAt: acu.createdAt,
    createdAtMs: Number.isFinite(createdAtMs) ? createdAtMs : 0,
    contentHash: acu.contentHash,
  };
}

/** The point an upsert sends for one ACU (the embedding becomes a plain number array for JSON). */
export function toPoint(scope: Scope, acu: Acu): Schemas['PointStruct'] {
  return { id: pointId(scope, acu.id), vector: Array.from(acu.embedding), payload: { ...acuPayload(scope, acu) } };
}

/** Vector query within the user's points; vectors come back because the cascade needs them. */
export function vectorQuery(scope: Scope, vector: Float32Array, k: number): Schemas['QueryRequest'] {
  return { query: Array.from(vector), filter: scopeFilter(scope), limit: k, with_payload: true, with_vector: true };
}

/** The BM25 leg's scroll: the user's newest payloads, text and id only (no vectors: 1,000 of them is megabytes). */
export function keywordScroll(scope: Scope, limit: number = KEYWORD_SCROLL_LIMIT): Schemas['ScrollRequest'] {
  return {
    filter: scopeFilter(scope),
    limit,
    with_payload: ['acuId', 'text'],
    with_vector: false,
    order_by: { key: 'createdAtMs', direction: 'desc' },
  };
}

/** A point as Qdrant returns it from query, scroll or retrieve. */
export interface PointLike {
  id: Schemas['ExtendedPointId'];
  payload?: Record<string, unknown> | null;
  vector?: Schemas['VectorStructOutput'] | Record<string, unknown> | null;
}

/**
 * Point → Acu. The embedding is the stored vector, which Qdrant keeps L2-normalised for cosine
 * collections (the Embedder port already returns unit vectors, so this is the vector written).
 * A payload or vector of the wrong shape is an `internal` error: the collection holds foreign data.
 */
export function pointToAcu(point: PointLike): Acu {
  const p = point.payload ?? {};
  const str = (key: string): string => {
    const v = p[key];
    if (typeof v !== 'string') throw malformed(point, `payload.${key} is not a string`);
    return v;
  };
  const refs = p['turnRefs'];
  if (!Array.isArray(refs) || !refs.every((r): r is string => typeof r === 'string')) throw malformed(point, 'payload.turnRefs is not a string array');
  return {
    id: str('acuId'),
    text: str('text'),
    embedding: toFloat32(point),
    turnRefs: [...refs],
    sessionId: str('sessionId'),
    validAt: str('validAt'),
    createdAt: str('createdAt'),
    contentHash: str('contentHash'),
  };
}

function toFloat32(point: PointLike): Float32Array {
  const v = point.vector;
  if (!Array.isArray(v) || !v.every((x): x is number => typeof x === 'number')) throw malformed(point, 'vector is not a dense unnamed vector');
  return Float32Array.from(v);
}

function malformed(point: PointLike, detail: string): MemgateError {
  return new MemgateError('internal', `qdrant: malformed ACU point ${String(point.id)}: ${detail}`, { retryable: false });
}
