import { MongoNetworkError, MongoServerError } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { MemgateError } from '../../src/core/errors.ts';
import type { HotDocument, Turn } from '../../src/core/types.ts';
import { archiveOps, coldId, fromColdRecord, textSearchQuery, textSearchString, toColdRecord } from '../../src/adapters/mongo/cold-queries.ts';
import { classifyMongoError, isDuplicateKey } from '../../src/adapters/mongo/errors.ts';
import { COLD_INDEXES, HOT_INDEXES } from '../../src/adapters/mongo/indexes.ts';
import { casFilter, casUpdate, fromHotRecord, hotId, schemaId, toHotRecord, toSchemaRecord, turnRecord } from '../../src/adapters/mongo/records.ts';
import { HOSTILE_QUERIES, makeHotDoc, makeTurn, randomScope, sibling } from '../support/fixtures.ts';

/** Every key path of a value whose value is undefined (BSON would store those as null). */
function undefinedPaths(value: unknown, path = '$'): string[] {
  if (value === undefined) return [path];
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => undefinedPaths(v, `${path}.${k}`));
}

/** Every object key anywhere in a value. */
function allKeys(value: unknown): string[] {
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => (Array.isArray(value) ? allKeys(v) : [k, ...allKeys(v)]));
}

describe('mongo hot document records', () => {
  it('derives one deterministic _id per scope, with no separator ambiguity', () => {
    const scope = randomScope();
    expect(hotId(scope)).toBe(hotId({ ...scope }));
    expect(hotId(scope)).toMatch(/^hot:[0-9a-f]{32}$/);
    expect(hotId(scope)).not.toBe(hotId(sibling(scope)));
    expect(hotId({ tenantId: 'a/b', agentId: 'c', userId: 'u' })).not.toBe(hotId({ tenantId: 'a', agentId: 'b/c', userId: 'u' }));
    expect(schemaId('t', 'a')).not.toBe(schemaId('t', 'b'));
    expect(schemaId('t', 'a')).toBe(schemaId('t', 'a'));
  });

  it('stores scope fields at top level and the profile as field entries', () => {
    const scope = randomScope();
    const doc = makeHotDoc(scope, 2);
    const rec = toHotRecord(doc);
    expect(rec._id).toBe(hotId(scope));
    expect([rec.tenantId, rec.agentId, rec.userId]).toEqual([scope.tenantId, scope.agentId, scope.userId]);
    expect(rec.version).toBe(2);
    expect(rec.profile).toEqual([
      { field: 'full_name', value: 'Rajiv Kumar', updatedAt: '2026-03-01T10:00:00.000Z', source: 'explicit', evidence: ['t1'] },
      { field: 'city', value: 'Bengaluru v', updatedAt: '2026-03-01T10:00:00.000Z', source: 'inferred', evidence: [] },
    ]);
    expect(rec).not.toHaveProperty('scope');
  });

  it('round-trips a hot document exactly (money values, nulls, optional turn fields)', () => {
    const doc = makeHotDoc(randomScope(), 3);
    expect(fromHotRecord(toHotRecord(doc))).toStrictEqual(doc);
  });

  it('round-trips the quarantine list, and leaves it out when there is none', () => {
    const doc = makeHotDoc(randomScope(), 3);
    expect(toHotRecord(doc)).not.toHaveProperty('quarantined');
    doc.quarantined = [{ turnId: 'p-1', reason: 'ts 1e+20 is out of range', quarantinedAt: '2026-02-09T10:00:00.000Z', turn: { turnId: 'p-1', ts: 1e20, tokens: null, text: 'x' } }];
    expect(fromHotRecord(toHotRecord(doc))).toStrictEqual(doc);
  });

  it('round-trips the statement time and the retracted status of timeline records', () => {
    const doc = makeHotDoc(randomScope(), 3);
    doc.entities[0] = { ...doc.entities[0]!, status: 'retracted', statedAt: '2026-02-09T10:00:00.000Z' };
    expect(fromHotRecord(toHotRecord(doc))).toStrictEqual(doc);
  });

  it('keeps agent-defined profile names with dots and dollars out of MongoDB field names', () => {
    const doc: HotDocument = makeHotDoc(randomScope(), 1);
    doc.profile['plot.no'] = { value: 7, updatedAt: '2026-03-01T10:00:00.000Z', source: 'explicit', evidence: [] };
    doc.profile['$budget'] = { value: true, updatedAt: '2026-03-01T10:00:00.000Z', source: 'confirmed', evidence: ['t2'] };
    const rec = toHotRecord(doc);
    expect(allKeys(rec).filter((k) => k.includes('.') || k.startsWith('$'))).toEqual([]);
    expect(fromHotRecord(rec)).toStrictEqual(doc);
  });

  it('never writes undefined (which BSON would store as null) and reads null optional fields as absent', () => {
    const turn: Turn = { ...makeTurn(1), speaker: undefined, asrConfidence: undefined, interrupted: false };
    const doc = { ...makeHotDoc(randomScope(), 1), recent: [turn] };
    const rec = toHotRecord(doc);
    expect(undefinedPaths(rec)).toEqual([]);
    expect(rec.recent[0]).not.toHaveProperty('speaker');
    expect(rec.recent[0]?.interrupted).toBe(false);
    const fromDb = { ...makeTurn(2), speaker: null, asrConfidence: null } as unknown as Turn;
    expect(turnRecord(fromDb)).not.toHaveProperty('speaker');
    expect(turnRecord(fromDb)).not.toHaveProperty('asrConfidence');
  });

  it('builds the compare-and-set filter and a $set of every field but _id', () => {
    const scope = randomScope();
    const rec = toHotRecord(makeHotDoc(scope, 4));
    expect(casFilter(scope, 3)).toEqual({ _id: hotId(scope), version: 3 });
    const update = casUpdate(rec);
    expect(Object.keys(update)).toEqual(['$set']);
    const { _id, ...fields } = rec;
    expect(update.$set).toEqual(fields);
    expect(update.$set).not.toHaveProperty('_id');
  });

  it('stores a schema under a deterministic tenant+agent id', () => {
    const schema = { fields: [{ name: 'budget', category: 'temporal' as const, type: 'money' as const, description: 'Budget' }] };
    expect(toSchemaRecord('t1', 'a1', schema)).toStrictEqual({ _id: schemaId('t1', 'a1'), tenantId: 't1', agentId: 'a1', schema });
    const withUndefined = { fields: [{ ...schema.fields[0]!, hints: undefined, keyBy: undefined }] };
    expect(undefinedPaths(toSchemaRecord('t1', 'a1', withUndefined))).toEqual([]);
  });
});

describe('mongo cold archive queries', () => {
  it('derives the _id from scope and turnId, so the same turnId of two users never collides', () => {
    const a = randomScope();
    expect(coldId(a, 'turn-1')).toBe(coldId({ ...a }, 'turn-1'));
    expect(coldId(a, 'turn-1')).not.toBe(coldId(a, 'turn-2'));
    expect(coldId(a, 'turn-1')).not.toBe(coldId(sibling(a), 'turn-1'));
  });

  it('archives as unordered-safe replace-upserts keyed by _id, verbatim turn fields plus scope', () => {
    const scope = randomScope();
    const turns = [makeTurn(1, { speaker: 'Rajiv', asrConfidence: 0.9 }), makeTurn(2, { role: 'agent', interrupted: true })];
    const ops = archiveOps(scope, turns);
    expect(ops).toEqual(
      turns.map((t) => ({
        replaceOne: {
          filter: { _id: coldId(scope, t.turnId) },
          replacement: { tenantId: scope.tenantId, agentId: scope.agentId, userId: scope.userId, ...t },
          upsert: true,
        },
      })),
    );
    expect(undefinedPaths(ops)).toEqual([]);
  });

  it('reads a stored record (with its projected score) back as the exact turn', () => {
    const scope = randomScope();
    const turn = makeTurn(3, { speaker: 'Rajiv Kumar', asrConfidence: 0.93 });
    expect(fromColdRecord({ ...toColdRecord(scope, turn), score: 1.5 } as ReturnType<typeof toColdRecord>)).toStrictEqual(turn);
  });

  it('builds the $text query: scope equality (the index prefix), textScore projection and sort, limit k', () => {
    const scope = randomScope();
    expect(textSearchQuery(scope, 'When is the Whitefield site visit?', 5)).toEqual({
      filter: { tenantId: scope.tenantId, agentId: scope.agentId, userId: scope.userId, $text: { $search: 'when is the whitefield site visit' } },
      options: { projection: { score: { $meta: 'textScore' } }, sort: { score: { $meta: 'textScore' }, ts: -1 }, limit: 5 },
    });
    expect(textSearchQuery(scope, 'budget', 0)).toBeNull();
    expect(textSearchQuery(scope, '?!', 5)).toBeNull();
  });

  it('reduces any query to plain words: no phrases, no negation, no operators', () => {
    expect(textSearchString('"budget"')).toBe('budget');
    expect(textSearchString('-budget')).toBe('budget');
    expect(textSearchString('non-vegetarian "dal makhani"')).toBe('non vegetarian dal makhani');
    expect(textSearchString('{"$gt": ""} $where')).toBe('gt where');
    expect(textSearchString('Café CAFÉ café')).toBe('café');
    expect(textSearchString('budget '.repeat(300))).toBe('budget');
    expect(textSearchString('\u0301')).toBeNull();
    expect(textSearchString(Array.from({ length: 50 }, (_, i) => `w${i}`).join(' '))?.split(' ')).toHaveLength(32);
    for (const q of HOSTILE_QUERIES) {
      const s = textSearchString(q);
      if (s !== null) expect(s, JSON.stringify(q.slice(0, 20))).toMatch(/^[\p{L}\p{N}][\p{L}\p{M}\p{N}]*( [\p{L}\p{N}][\p{L}\p{M}\p{N}]*)*$/u);
    }
  });
});

describe('mongo indexes', () => {
  it('makes the hot scope index unique and the cold text index compound with the scope as its prefix', () => {
    expect(HOT_INDEXES).toEqual([{ key: { tenantId: 1, agentId: 1, userId: 1 }, name: 'scope', unique: true }]);
    const text = COLD_INDEXES.find((ix) => Object.values(ix.key).includes('text'));
    expect(text?.key).toEqual({ tenantId: 1, agentId: 1, userId: 1, text: 'text' });
    expect(Object.keys(text?.key ?? {})).toEqual(['tenantId', 'agentId', 'userId', 'text']);
    expect(text?.default_language).toBe('english');
    // A text index cannot serve count/forget, so there must be a plain scope index as well.
    expect(COLD_INDEXES.some((ix) => !Object.values(ix.key).includes('text') && Object.keys(ix.key).slice(0, 3).join() === 'tenantId,agentId,userId')).toBe(true);
  });
});

describe('mongo error classification', () => {
  it('recognises a duplicate key and maps network failures to retryable unavailable', () => {
    const dup = new MongoServerError({ message: 'E11000 duplicate key error', code: 11000 });
    expect(isDuplicateKey(dup)).toBe(true);
    expect(isDuplicateKey(new MongoServerError({ message: 'other', code: 2 }))).toBe(false);
    const net = classifyMongoError(new MongoNetworkError('connection reset'), 'getHot');
    expect(net).toBeInstanceOf(MemgateError);
    expect([net.code, net.retryable]).toEqual(['unavailable', true]);
    const bad = classifyMongoError(new MongoServerError({ message: 'text index required for $text query', code: 27 }), 'search');
    expect([bad.code, bad.retryable]).toEqual(['internal', false]);
    expect(bad.message).toContain('mongo search');
  });
});
