import { QdrantClientUnexpectedResponseError, type QdrantClient, type Schemas } from '@qdrant/js-client-rest';
import { describe, expect, it } from 'vitest';
import { QdrantAcuIndex } from '../../src/adapters/qdrant/acu-index.ts';
import { BM25_DEFAULTS, idf, queryTerms, rankBm25, scoreBm25, tokenize } from '../../src/adapters/qdrant/bm25.ts';
import { classifyQdrantError } from '../../src/adapters/qdrant/errors.ts';
import {
  acuPayload,
  collectionConfig,
  collectionProblem,
  keywordScroll,
  missingPayloadIndexes,
  PAYLOAD_INDEXES,
  pointId,
  pointToAcu,
  scopeFilter,
  toPoint,
  vectorQuery,
} from '../../src/adapters/qdrant/queries.ts';
import { MemgateError } from '../../src/core/errors.ts';
import type { Scope } from '../../src/core/types.ts';
import { makeAcu, randomScope, sibling, unitVector } from '../support/fixtures.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('qdrant point ids and payloads', () => {
  it('derives a deterministic UUID point id from scope + ACU id, whatever the ACU id looks like', () => {
    const scope = randomScope();
    for (const id of ['acu-1', 'not a uuid at all', '2f1c7f36-8a55-4b8e-9f6e-0c7a4a3f9b12']) {
      expect(pointId(scope, id)).toMatch(UUID);
      expect(pointId(scope, id)).toBe(pointId({ ...scope }, id));
    }
    expect(pointId(scope, 'acu-1')).not.toBe(pointId(scope, 'acu-2'));
    // The same ACU id under two users is two points: one user's upsert never overwrites another's.
    expect(pointId(scope, 'acu-1')).not.toBe(pointId(sibling(scope), 'acu-1'));
  });

  it('filters every request by the three scope fields with must/match', () => {
    const scope: Scope = { tenantId: 't1', agentId: 'a1', userId: 'u1' };
    expect(scopeFilter(scope)).toEqual({
      must: [
        { key: 'tenantId', match: { value: 't1' } },
        { key: 'agentId', match: { value: 'a1' } },
        { key: 'userId', match: { value: 'u1' } },
      ],
    });
  });

  it('stores every ACU field but the embedding in the payload, plus scope and the original id', () => {
    const scope = randomScope();
    const acu = makeAcu(scope, 'Rajiv Kumar budget was approved for eighty lakhs', unitVector({ 0: 1, 1: 1 }));
    const point = toPoint(scope, acu);
    expect(point.id).toBe(pointId(scope, acu.id));
    expect(point.vector).toEqual(Array.from(acu.embedding));
    expect(Array.isArray(point.vector)).toBe(true);
    expect(point.payload).toEqual({
      tenantId: scope.tenantId,
      agentId: scope.agentId,
      userId: scope.userId,
      acuId: acu.id,
      text: acu.text,
      turnRefs: acu.turnRefs,
      sessionId: acu.sessionId,
      validAt: acu.validAt,
      createdAt: acu.createdAt,
      createdAtMs: Date.parse(acu.createdAt),
      contentHash: acu.contentHash,
    });
    expect(point.payload).not.toHaveProperty('embedding');
    expect(acuPayload(scope, { ...acu, createdAt: 'not a date' }).createdAtMs).toBe(0);
  });

  it('round-trips a point back to the exact ACU, embedding as a Float32Array', () => {
    const scope = randomScope();
    const acu = makeAcu(scope, 'Rajiv Kumar owns a dog named Bruno', unitVector({ 0: 0.8, 1: 0.6 }));
    // As JSON would carry it back from the server.
    const wire = JSON.parse(JSON.stringify(toPoint(scope, acu))) as Schemas['Record'];
    const back = pointToAcu(wire);
    expect(back.embedding).toBeInstanceOf(Float32Array);
    expect(back).toStrictEqual(acu);
  });

  it('refuses points that are not memgate ACUs with an internal, non-retryable error', () => {
    const scope = randomScope();
    const good = toPoint(scope, makeAcu(scope, 'x', unitVector({ 0: 1 })));
    const cases = [
      { ...good, payload: { ...good.payload, text: 42 } },
      { ...good, payload: { ...good.payload, turnRefs: 'turn-1' } },
      { ...good, vector: { named: [1, 0] } },
      { ...good, vector: undefined },
    ];
    for (const p of cases) {
      const err = (() => {
        try {
          pointToAcu(p as Schemas['Record']);
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(err).toBeInstanceOf(MemgateError);
      expect((err as MemgateError).code).toBe('internal');
      expect((err as MemgateError).retryable).toBe(false);
    }
  });
});

describe('qdrant request bodies', () => {
  it('queries by vector within the scope with payload and vector returned', () => {
    const scope = randomScope();
    const v = unitVector({ 0: 1 });
    expect(vectorQuery(scope, v, 7)).toEqual({ query: Array.from(v), filter: scopeFilter(scope), limit: 7, with_payload: true, with_vector: true });
  });

  it('scrolls at most 1,000 of the user’s newest payloads, text and id only', () => {
    const scope = randomScope();
    expect(keywordScroll(scope)).toEqual({
      filter: scopeFilter(scope),
      limit: 1000,
      with_payload: ['acuId', 'text'],
      with_vector: false,
      order_by: { key: 'createdAtMs', direction: 'desc' },
    });
  });

  it('creates a cosine collection of the configured size and checks an existing one', () => {
    expect(collectionConfig(384)).toEqual({ vectors: { size: 384, distance: 'Cosine' } });
    const info = (vectors: unknown) => ({ config: { params: { vectors } } }) as unknown as Schemas['CollectionInfo'];
    expect(collectionProblem(info({ size: 384, distance: 'Cosine' }), 384)).toBeNull();
    expect(collectionProblem(info({ size: 1536, distance: 'Cosine' }), 384)).toContain('1536 dimensions');
    expect(collectionProblem(info({ size: 384, distance: 'Dot' }), 384)).toContain('Dot');
    expect(collectionProblem(info({ dense: { size: 384, distance: 'Cosine' } }), 384)).toContain('no single unnamed vector');
  });

  it('indexes the scope fields as keywords and createdAtMs as an integer, creating only missing ones', () => {
    expect(PAYLOAD_INDEXES).toEqual([
      { field_name: 'tenantId', field_schema: 'keyword' },
      { field_name: 'agentId', field_schema: 'keyword' },
      { field_name: 'userId', field_schema: 'keyword' },
      { field_name: 'createdAtMs', field_schema: 'integer' },
    ]);
    const schema = { tenantId: { data_type: 'keyword', points: 3 }, userId: { data_type: 'keyword', points: 3 } };
    expect(missingPayloadIndexes({ payload_schema: schema } as unknown as Schemas['CollectionInfo']).map((i) => i.field_name)).toEqual(['agentId', 'createdAtMs']);
  });
});

describe('bm25', () => {
  it('tokenises to lower-case, accent-folded words of any script, dropping punctuation and single letters', () => {
    expect(tokenize('When is the Whitefield site-visit? Plot 7, a "big" one')).toEqual(['when', 'is', 'the', 'whitefield', 'site', 'visit', 'plot', '7', 'big', 'one']);
    expect(tokenize('नमस्ते Café ＢＵＤＧＥＴ')).toEqual(['नमस्ते', 'cafe', 'budget']);
    expect(tokenize('"" * -- 😀')).toEqual([]);
  });

  it('sums over distinct content words of the query, keeping stop words only when nothing else is left', () => {
    expect([...queryTerms('When is the Whitefield site visit? Site!')]).toEqual(['whitefield', 'site', 'visit']);
    expect([...queryTerms('what is it')]).toEqual(['what', 'is', 'it']);
  });

  it('scores with k1 = 1.2, b = 0.75 and a positive idf', () => {
    expect(BM25_DEFAULTS).toEqual({ k1: 1.2, b: 0.75 });
    expect(idf(3, 3)).toBeGreaterThan(0);
    const texts = ['budget approved for eighty', 'site visit saturday', 'budget budget budget discussion'];
    const [d0, d1, d2] = scoreBm25('budget', texts);
    const avg = 11 / 3;
    const w = Math.log(1 + (3 - 2 + 0.5) / (2 + 0.5));
    expect(d0).toBeCloseTo((w * 1 * 2.2) / (1 + 1.2 * (0.25 + (0.75 * 4) / avg)), 10);
    expect(d2).toBeCloseTo((w * 3 * 2.2) / (3 + 1.2 * (0.25 + (0.75 * 4) / avg)), 10);
    expect(d1).toBe(0);
  });

  it('ranks rarer terms, higher tf and shorter documents first; leaves out non-matching ones; caps at k', async () => {
    const docs = [
      { key: 'long', text: 'the site office near the metro station is closed on sunday and public holidays' },
      { key: 'visit', text: 'Rajiv scheduled a site visit in Whitefield' },
      { key: 'short', text: 'site office closed' },
      { key: 'none', text: 'the weather is lovely' },
    ];
    const hits = await rankBm25('Whitefield site visit', docs, 10);
    expect(hits.map((h) => h.key)).toEqual(['visit', 'short', 'long']);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThan(hits[i]!.score);
    expect((await rankBm25('office closed', docs, 1)).map((h) => h.key)).toEqual(['short']);
    expect(await rankBm25('xylophone', docs, 5)).toEqual([]);
    expect(await rankBm25('?!', docs, 5)).toEqual([]);
    expect(await rankBm25('site', docs, 0)).toEqual([]);
  });

  it('keeps input order on ties and gives the same result in small chunks, yielding to the event loop', async () => {
    const docs = Array.from({ length: 40 }, (_, i) => ({ key: i, text: i % 2 === 0 ? 'budget approved' : 'site visit' }));
    const whole = await rankBm25('budget', docs, 5);
    expect(whole.map((h) => h.key)).toEqual([0, 2, 4, 6, 8]);
    let ranBetween = false;
    setImmediate(() => (ranBetween = true));
    const chunked = await rankBm25('budget', docs, 5, { chunkSize: 3 });
    expect(chunked).toEqual(whole);
    expect(ranBetween).toBe(true);
  });
});

/** Just enough of Qdrant's scroll/retrieve/upsert to run keywordSearch's scroll → rank → retrieve flow. */
function fakeClient() {
  const points = new Map<string, Schemas['PointStruct']>();
  const calls: Array<{ op: string; body: unknown }> = [];
  const matches = (p: Schemas['PointStruct'], filter: Schemas['Filter']): boolean =>
    (filter.must as Array<{ key: string; match: { value: unknown } }>).every((c) => p.payload?.[c.key] === c.match.value);
  const client = {
    async upsert(_c: string, body: { points: Schemas['PointStruct'][] }) {
      for (const p of body.points) points.set(String(p.id), structuredClone(p));
      return { operation_id: 1, status: 'completed' };
    },
    async scroll(_c: string, body: Schemas['ScrollRequest']) {
      calls.push({ op: 'scroll', body });
      const keys = body.with_payload as string[];
      const found = [...points.values()]
        .filter((p) => matches(p, body.filter as Schemas['Filter']))
        .sort((a, b) => Number(b.payload?.['createdAtMs']) - Number(a.payload?.['createdAtMs']))
        .slice(0, body.limit ?? 10)
        .map((p) => ({ id: p.id, payload: Object.fromEntries(keys.map((k) => [k, p.payload?.[k]])) }));
      return { points: found, next_page_offset: null };
    },
    async retrieve(_c: string, body: { ids: string[]; with_vector: boolean }) {
      calls.push({ op: 'retrieve', body });
      return body.ids.flatMap((id) => {
        const p = points.get(id);
        return p ? [{ id: p.id, payload: p.payload, vector: p.vector }] : [];
      });
    },
  };
  return { client: client as unknown as QdrantClient, calls, points };
}

describe('QdrantAcuIndex keyword leg (against a fake scroll/retrieve)', () => {
  it('ranks the scrolled payloads by BM25 and fetches only the top k with their vectors', async () => {
    const { client, calls } = fakeClient();
    const index = new QdrantAcuIndex(client, 'acus', 384);
    const scope = randomScope();
    const visit = makeAcu(scope, 'Rajiv Kumar scheduled a site visit in Whitefield', unitVector({ 1: 1 }));
    const office = makeAcu(scope, 'The site office is closed on Sunday', unitVector({ 2: 1 }), { createdAt: '2026-03-02T00:00:00.000Z' });
    const dog = makeAcu(scope, 'Rajiv Kumar owns a dog named Bruno', unitVector({ 0: -1 }));
    const other = sibling(scope);
    await index.upsert(scope, [visit, office, dog]);
    await index.upsert(other, [makeAcu(other, 'Whitefield site visit', unitVector({ 5: 1 }))]);
    const hits = await index.keywordSearch(scope, 'When is the Whitefield site visit?', 1);
    expect(hits).toHaveLength(1);
    expect(hits[0]!.acu).toStrictEqual(visit);
    expect(hits[0]!.score).toBeGreaterThan(0);
    const [scroll, retrieve] = calls;
    expect(scroll).toEqual({ op: 'scroll', body: keywordScroll(scope) });
    expect(retrieve).toEqual({ op: 'retrieve', body: { ids: [pointId(scope, visit.id)], with_payload: true, with_vector: true } });
    expect((await index.keywordSearch(scope, 'site', 5)).map((h) => h.acu.id).sort()).toEqual([visit.id, office.id].sort());
    expect(await index.keywordSearch(scope, 'xylophone', 5)).toEqual([]);
  });

  it('drops a hit whose point vanished between scroll and retrieve (a concurrent forget)', async () => {
    const { client, points } = fakeClient();
    const index = new QdrantAcuIndex(client, 'acus', 384);
    const scope = randomScope();
    const a = makeAcu(scope, 'budget approved', unitVector({ 0: 1 }));
    const b = makeAcu(scope, 'budget discussed', unitVector({ 1: 1 }));
    await index.upsert(scope, [a, b]);
    const origRetrieve = (client as unknown as { retrieve: (c: string, body: { ids: string[] }) => Promise<unknown> }).retrieve;
    (client as unknown as { retrieve: unknown }).retrieve = async (c: string, body: { ids: string[] }) => {
      points.delete(pointId(scope, a.id));
      return origRetrieve(c, body);
    };
    expect((await index.keywordSearch(scope, 'budget', 5)).map((h) => h.acu.id)).toEqual([b.id]);
  });

  it('refuses vectors of the wrong size before any request', async () => {
    const { client, calls } = fakeClient();
    const index = new QdrantAcuIndex(client, 'acus', 384);
    const scope = randomScope();
    await expect(index.upsert(scope, [makeAcu(scope, 'x', new Float32Array(3))])).rejects.toMatchObject({ code: 'internal', retryable: false });
    await expect(index.search(scope, new Float32Array(3), 5)).rejects.toMatchObject({ code: 'internal' });
    expect(await index.search(scope, unitVector({ 0: 1 }), 0)).toEqual([]);
    expect(calls).toEqual([]);
  });
});

describe('qdrant error classification', () => {
  it('maps transport failures and 5xx to retryable unavailable, 429 to rate_limited, other 4xx to internal', () => {
    const refused = classifyQdrantError(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }), 'query');
    expect([refused.code, refused.retryable]).toEqual(['unavailable', true]);
    expect(refused.message).toContain('ECONNREFUSED');
    const down = classifyQdrantError(Object.assign(new Error('Service Unavailable'), { status: 503 }), 'upsert');
    expect([down.code, down.retryable]).toEqual(['unavailable', true]);
    const busy = classifyQdrantError(Object.assign(new Error('Too Many Requests'), { status: 429 }), 'upsert');
    expect([busy.code, busy.retryable]).toEqual(['rate_limited', true]);
    const bad = classifyQdrantError(Object.assign(new Error('Bad Request'), { status: 400, data: { status: { error: 'Wrong input: Vector dimension error: expected dim: 384, got 3' } } }), 'upsert');
    expect([bad.code, bad.retryable]).toEqual(['internal', false]);
    expect(bad.message).toContain('expected dim: 384');
    const notFound = classifyQdrantError(new QdrantClientUnexpectedResponseError('Unexpected Response: 404 (Not Found)'), 'count');
    expect([notFound.code, notFound.retryable]).toEqual(['internal', false]);
  });
});
