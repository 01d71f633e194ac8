import { randomUUID } from 'node:crypto';
import { stableHash, stableUuid } from '../../src/core/ids.ts';
import type { Acu, HotDocument, Scope, SessionContext, Turn } from '../../src/core/types.ts';
import type { ExtractionJob } from '../../src/ports/job-bus.ts';
import type { MemgateEvent } from '../../src/ports/event-bus.ts';

/** Vector size the contract suites use: the configured default, so a server collection made for it fits. */
export const CONTRACT_DIMENSIONS = 384;

/** A short random id, to namespace a test on a shared server. */
export function rid(prefix = ''): string {
  return prefix + randomUUID().slice(0, 12);
}

/** A fresh random tenant (and agent/user unless given): no two tests ever share data. */
export function randomScope(overrides: Partial<Scope> = {}): Scope {
  return { tenantId: rid('t-'), agentId: rid('a-'), userId: rid('u-'), ...overrides };
}

/** Another user of the same tenant and agent. */
export function sibling(scope: Scope, userId = rid('u-')): Scope {
  return { ...scope, userId };
}

/** A turn as the gateway hands it to `TurnBuffer.append` (tokens and receivedAt set). */
export type TurnToAppend = Omit<Turn, 'seq' | 'turnId'> & { turnId: string };

let clockMs = Date.parse('2026-03-01T10:00:00Z');

/** A turn to append; `ts` moves forward one second per call. */
export function makeTurnInput(overrides: Partial<TurnToAppend> = {}): TurnToAppend {
  clockMs += 1000;
  const text = overrides.text ?? `turn text ${rid()}`;
  return {
    turnId: rid('turn-'),
    sessionId: 's-1',
    role: 'user',
    text,
    ts: clockMs,
    receivedAt: clockMs + 3,
    tokens: Math.max(1, Math.ceil(text.length / 4)),
    ...overrides,
  };
}

/** A stored turn (with seq), for the cold archive. */
export function makeTurn(seq: number, overrides: Partial<Turn> = {}): Turn {
  return { ...makeTurnInput(), seq, ...overrides };
}

/** A 384-d unit vector with the given components set (then normalised): hand-built cosine cases. */
export function unitVector(components: Record<number, number>, dims = CONTRACT_DIMENSIONS): Float32Array {
  const v = new Float32Array(dims);
  for (const [i, x] of Object.entries(components)) v[Number(i)] = x;
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  return norm > 0 ? v.map((x) => x / norm) : v;
}

/** A random L2-normalised vector. */
export function randomUnitVector(dims = CONTRACT_DIMENSIONS, random: () => number = Math.random): Float32Array {
  const v = new Float32Array(dims);
  for (let i = 0; i < dims; i++) v[i] = random() * 2 - 1;
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  return v.map((x) => x / norm);
}

/** An ACU with a deterministic UUID id (valid for Qdrant too) derived from scope and text. */
export function makeAcu(scope: Scope, text: string, embedding: Float32Array, overrides: Partial<Acu> = {}): Acu {
  const contentHash = stableHash(text);
  return {
    id: stableUuid(scope.tenantId, scope.agentId, scope.userId, contentHash),
    text,
    embedding,
    turnRefs: [rid('turn-'), rid('turn-')],
    sessionId: rid('s-'),
    validAt: '2026-02-14T09:30:00.000Z',
    createdAt: '2026-03-01T10:00:00.000Z',
    contentHash,
    ...overrides,
  };
}

/** A hot document at `version` with a little of everything (profile, superseded entity, money, nulls). */
export function makeHotDoc(scope: Scope, version: number, note = 'v'): HotDocument {
  return {
    scope,
    profile: {
      full_name: { value: 'Rajiv Kumar', updatedAt: '2026-03-01T10:00:00.000Z', source: 'explicit', evidence: ['t1'] },
      city: { value: `Bengaluru ${note}`, updatedAt: '2026-03-01T10:00:00.000Z', source: 'inferred', evidence: [] },
    },
    entities: [
      {
        id: 'e1',
        key: 'budget',
        field: 'budget',
        value: { amount: 5_000_000, currency: 'INR' },
        category: 'temporal',
        status: 'superseded',
        source: 'explicit',
        validFrom: '2026-01-03T00:00:00.000Z',
        validUntil: '2026-02-09T00:00:00.000Z',
        recordedAt: '2026-01-03T00:00:05.000Z',
        expiresAt: null,
        supersedes: null,
        supersededBy: 'e2',
        evidence: ['t3'],
      },
      {
        id: 'e2',
        key: 'budget',
        field: 'budget',
        value: { amount: 8_000_000, currency: 'INR' },
        category: 'temporal',
        status: 'active',
        source: 'confirmed',
        validFrom: '2026-02-09T00:00:00.000Z',
        validUntil: null,
        recordedAt: '2026-02-09T00:00:05.000Z',
        expiresAt: null,
        supersedes: 'e1',
        supersededBy: null,
        evidence: ['t9'],
      },
    ],
    recent: [makeTurn(7, { text: 'Namaste, café ☕ — "quoted"', speaker: 'Rajiv Kumar', asrConfidence: 0.91 })],
    summaries: [{ sessionId: 's-1', text: 'Discussed budget', from: '2026-01-03T00:00:00.000Z', to: '2026-01-03T00:10:00.000Z' }],
    counters: { extractions: version, turnsArchived: 3, acusIndexed: 2, acusSuppressed: 1 },
    version,
    updatedAt: '2026-03-01T10:00:00.000Z',
  };
}

/** A preloaded session context. */
export function makeSessionContext(overrides: Partial<SessionContext> = {}): SessionContext {
  return {
    profile: { full_name: 'Rajiv Kumar', budget: { amount: 8_000_000, currency: 'INR' }, vip: true, visits: 2 },
    facts: [{ key: 'budget', field: 'budget', value: { amount: 8_000_000, currency: 'INR' }, source: 'explicit', validFrom: '2026-02-09T00:00:00.000Z', recordedAt: '2026-02-09T00:00:05.000Z' }],
    possibly: [],
    recent: [{ turnId: 't1', role: 'user', text: 'Hello — नमस्ते 👋', ts: 1_772_359_200_000, speaker: 'Rajiv' }],
    summaries: [],
    contextBlock: '## Profile\n- full_name: Rajiv Kumar',
    tools: [{ type: 'function', function: { name: 'memory_search', description: 'Search memory', parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] } } }],
    version: 3,
    builtAt: 1_772_359_200_000,
    expiresAt: null,
    ...overrides,
  };
}

/** An extraction job for the scope. */
export function makeJob(scope: Scope, reason: ExtractionJob['reason'] = 'threshold'): ExtractionJob {
  return { scope, reason, requestedAt: Date.now() };
}

/** A live event for the scope. */
export function makeEvent(scope: Scope, type: MemgateEvent['type'] = 'turn.appended', data: Record<string, unknown> = {}): MemgateEvent {
  return { type, tenantId: scope.tenantId, agentId: scope.agentId, userId: scope.userId, sessionId: 's-1', at: Date.now(), data };
}

/** Inputs a caller (or an LLM tool call) may send that are syntax in some query language. */
export const HOSTILE_QUERIES: readonly string[] = [
  '',
  '   ',
  '"',
  '""',
  "'",
  '*',
  'AND',
  'OR OR',
  'NOT',
  'NEAR(a b)',
  'budget AND',
  '(',
  ')',
  '-budget',
  '+',
  '^',
  'text:budget',
  'sk:x',
  '{text}: budget',
  '$where',
  '{"$gt": ""}',
  '\\',
  '%',
  '_',
  'a"b',
  '😀🏠💰',
  '\u0301',
  '\u0000',
  'SELECT * FROM turns; --',
  'x'.repeat(5000),
  'budget '.repeat(300),
];

/** A first call with a home buyer, as [role, text]: name, budget, loan and location, then a goodbye. */
export const RAJIV_FIRST_CALL = [
  ['agent', 'Hello, who am I speaking with?'],
  ['user', 'My name is Rajiv Kumar.'],
  ['agent', 'What budget do you have in mind?'],
  ['user', 'My budget is around 50 lakhs.'],
  ['agent', 'Have you applied for a loan?'],
  ['user', 'Yes, I applied for a loan with HDFC last week.'],
  ['agent', 'Where would you like to buy?'],
  ['user', "I'm looking for a 3 BHK flat near Whitefield."],
  ['agent', 'Great, I will send options.'],
  ['user', 'Thanks, bye.'],
] as const;
