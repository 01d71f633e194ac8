import { randomUUID } from 'node:crypto';
import OpenAI, { APIError } from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpenAiEmbedder, OpenAiExtractor } from '../../src/adapters/openai/index.ts';
import type { OpenAiExtractorOptions } from '../../src/adapters/openai/index.ts';
import { MemgateError } from '../../src/core/errors.ts';
import type { ExtractionSchema } from '../../src/core/extraction-schema.ts';
import type { Turn } from '../../src/core/types.ts';
import type { ExtractionInput } from '../../src/ports/extractor.ts';
import { startFakeOpenAI } from '../support/fake-openai.ts';
import type { FakeOpenAI } from '../support/fake-openai.ts';

const schema: ExtractionSchema = {
  fields: [
    { name: 'full_name', category: 'profile', type: 'string', description: "The user's full name" },
    { name: 'budget', category: 'temporal', type: 'money', description: 'Total budget for the purchase', hints: ['budget', 'approved for'] },
    { name: 'property_status', category: 'temporal', type: 'enum', description: 'Where a shortlisted property stands', keyBy: 'property', values: ['shortlisted', 'rejected'] },
    { name: 'site_visit', category: 'ephemeral', type: 'datetime', description: 'Scheduled site visit', ttlHours: 24 },
  ],
};

const T0 = Date.parse('2026-01-15T10:00:00Z');
let fake: FakeOpenAI;
let ids: string[];
let turns: Turn[];

function turn(i: number, role: Turn['role'], text: string, extra: Partial<Turn> = {}): Turn {
  return { turnId: ids[i]!, seq: i + 1, sessionId: 's1', role, text, ts: T0 + i * 1000, receivedAt: T0 + i * 1000, tokens: 10, ...extra };
}

function extractor(overrides: Partial<OpenAiExtractorOptions> = {}): OpenAiExtractor {
  return new OpenAiExtractor({ baseURL: fake.url, apiKey: 'test-key', model: 'fake-model', timeoutMs: 5_000, maxRetries: 1, ...overrides });
}

function input(): ExtractionInput {
  return { schema, turns, knownProfile: { full_name: 'Rajiv Kumar' }, now: T0 + 60_000 };
}

async function rejection(p: Promise<unknown>): Promise<MemgateError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MemgateError);
  return err as MemgateError;
}

beforeEach(async () => {
  fake = await startFakeOpenAI({ dimensions: 64 });
  const tag = randomUUID().slice(0, 8);
  ids = [0, 1, 2, 3].map((i) => `${tag}-t${i}`);
  turns = [
    turn(0, 'user', 'Hi, this is Rajiv. My budget is 80 lakhs now, the bank approved it yesterday.', { speaker: 'Rajiv Kumar', asrConfidence: 0.93 }),
    turn(1, 'agent', 'Great. Shall I book the Prestige Lakeside visit for tomorrow at 5 pm?', { speaker: 'Priya', interrupted: true }),
    turn(2, 'user', 'Yes, book it. And drop Sobha Dream, it is too far.', { speaker: 'Rajiv Kumar' }),
    turn(3, 'agent', 'Done.', { speaker: 'Priya' }),
  ];
});

afterEach(async () => {
  await fake.close();
});

describe('OpenAiExtractor.extract', () => {
  it('parses a scripted structured reply into ExtractedFact[]', async () => {
    fake.scriptChat([
      {
        facts: [
          { field: 'budget', qualifier: null, value: { amount: 8_000_000, currency: 'INR' }, source: 'explicit', validFrom: '2026-01-14', evidence: [ids[0]] },
          { field: 'property_status', qualifier: 'Sobha Dream', value: 'rejected', source: 'explicit', validFrom: null, evidence: [ids[2]] },
          { field: 'site_visit', qualifier: 'ignored', value: '2026-01-16T17:00:00+05:30', source: 'confirmed', validFrom: null, evidence: [ids[1], ids[2]] },
        ],
      },
    ]);
    const facts = await extractor().extract(input());
    expect(facts).toEqual([
      { field: 'budget', value: { amount: 8_000_000, currency: 'INR' }, source: 'explicit', validFrom: '2026-01-14T00:00:00.000Z', evidence: [ids[0]] },
      { field: 'property_status', qualifier: 'Sobha Dream', value: 'rejected', source: 'explicit', evidence: [ids[2]] },
      // no keyBy on site_visit: a qualifier from the model is not kept
      { field: 'site_visit', value: '2026-01-16T17:00:00+05:30', source: 'confirmed', evidence: [ids[1], ids[2]] },
    ]);
  });

  it('sends a strict json_schema response format naming the schema fields, and a prompt with the turns', async () => {
    await extractor().extract(input());
    expect(fake.chatRequests).toHaveLength(1);
    const body = fake.chatRequests[0]!;
    expect(body.model).toBe('fake-model');
    expect(body.response_format?.type).toBe('json_schema');
    expect(body.response_format?.json_schema?.strict).toBe(true);
    const jsonSchema = JSON.stringify(body.response_format?.json_schema?.schema);
    for (const f of schema.fields) expect(jsonSchema).toContain(`"${f.name}"`);
    expect(jsonSchema).not.toContain('$schema');
    const prompt = body.messages.map((m) => m.content).join('\n');
    for (const f of schema.fields) expect(prompt).toContain(f.name);
    for (const id of ids) expect(prompt).toContain(id);
    expect(prompt).toContain('"approved for"');
    expect(prompt).toContain('keyed by property');
    expect(prompt).toContain('ended: true when the user says a value no longer holds');
    expect(prompt).toContain('"shortlisted", "rejected"');
    expect(prompt).toContain('2026-01-15T10:00:00.000Z');
    expect(prompt).toContain('"asrConfidence":0.93');
    expect(prompt).toContain('"interrupted":true');
    expect(prompt).toContain('Rajiv Kumar');
  });

  it('drops facts with an unknown field or no known evidence, and strips unknown evidence ids', async () => {
    fake.onChat(() => ({
      facts: [
        { field: 'favourite_colour', qualifier: null, value: 'blue', source: 'explicit', validFrom: null, evidence: [ids[0]] },
        { field: 'budget', qualifier: null, value: { amount: 5_000_000, currency: 'INR' }, source: 'explicit', validFrom: null, evidence: ['made-up-turn'] },
        { field: 'budget', qualifier: null, value: { amount: 8_000_000, currency: 'INR' }, source: 'explicit', validFrom: null, evidence: ['made-up-turn', ids[0]] },
        { field: 'full_name', value: 'Rajiv Kumar', evidence: [ids[0]] }, // malformed: no source
      ],
    }));
    const facts = await extractor().extract(input());
    expect(facts).toEqual([{ field: 'budget', value: { amount: 8_000_000, currency: 'INR' }, source: 'explicit', evidence: [ids[0]] }]);
  });

  it('retries garbage once, then rejects with a retryable MemgateError', async () => {
    fake.mode = 'garbage';
    const err = await rejection(extractor({ maxRetries: 1 }).extract(input()));
    expect(err.code).toBe('unavailable');
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('not JSON');
    expect(err.cause).toBeInstanceOf(SyntaxError);
    expect(fake.chatRequests).toHaveLength(2);
  });

  it('a response body that is not JSON names the LLM endpoint as the source, retryable', async () => {
    fake.scriptChat([{ mode: 'truncated' }, { mode: 'truncated' }, { mode: 'truncated' }]);
    const err = await rejection(extractor({ maxRetries: 0 }).extract(input()));
    expect(err.code).toBe('unavailable');
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/LLM endpoint answered with a body that is not JSON/);
  });

  it('recovers when the retry returns valid output', async () => {
    fake.scriptChat([{ mode: 'garbage' }, { facts: [{ field: 'full_name', qualifier: null, value: 'Rajiv Kumar', source: 'explicit', validFrom: null, evidence: [ids[0]] }] }]);
    const facts = await extractor().extract(input());
    expect(facts.map((f) => f.value)).toEqual(['Rajiv Kumar']);
    expect(fake.chatRequests).toHaveLength(2);
  });

  it('treats JSON of the wrong shape as invalid output', async () => {
    fake.scriptChat([{ content: { items: [] } }, { content: '```json\n{"facts": []}\n```' }]);
    await expect(extractor().extract(input())).resolves.toEqual([]);
    expect(fake.chatRequests).toHaveLength(2);
  });

  it('rejects a hanging endpoint after the timeout, retryable, without retrying in place', async () => {
    fake.mode = 'hang';
    const err = await rejection(extractor({ timeoutMs: 300 }).extract(input()));
    expect(err.code).toBe('unavailable');
    expect(err.retryable).toBe(true);
    expect(err.message).toContain('timed out');
    expect(fake.chatRequests).toHaveLength(1);
  });

  it('classifies HTTP 500 as retryable after the bounded retries', async () => {
    fake.mode = 'error500';
    const err = await rejection(extractor({ maxRetries: 1 }).extract(input()));
    expect(err.code).toBe('unavailable');
    expect(err.retryable).toBe(true);
    expect(err.cause).toBeInstanceOf(APIError);
    expect(fake.chatRequests).toHaveLength(2);
  });

  it('classifies HTTP 429 as rate_limited and honours retry-after-ms', async () => {
    fake.scriptChat([{ status: 429, headers: { 'retry-after-ms': '10' } }, { status: 429 }]);
    const err = await rejection(extractor({ maxRetries: 1 }).extract(input()));
    expect(err.code).toBe('rate_limited');
    expect(err.retryable).toBe(true);
    expect(fake.chatRequests).toHaveLength(2);
  });

  it('classifies HTTP 400 as not retryable and does not retry it', async () => {
    fake.scriptChat([{ status: 400, message: 'response_format json_schema is not supported' }]);
    const err = await rejection(extractor({ maxRetries: 3 }).extract(input()));
    expect(err.code).toBe('internal');
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('400');
    expect((err.cause as APIError).status).toBe(400);
    expect(fake.chatRequests).toHaveLength(1);
  });

  it('classifies a refused connection as retryable', async () => {
    const url = fake.url;
    await fake.close();
    const err = await rejection(new OpenAiExtractor({ baseURL: url, apiKey: 'k', model: 'm', timeoutMs: 2_000, maxRetries: 0 }).extract(input()));
    expect(err.retryable).toBe(true);
    fake = await startFakeOpenAI();
  });

  it('makes no call when there is nothing to extract', async () => {
    const ex = extractor();
    expect(await ex.extract({ ...input(), schema: { fields: [] } })).toEqual([]);
    expect(await ex.extract({ ...input(), turns: [] })).toEqual([]);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('OpenAiExtractor.extract: memory semantics (corrections, confidence, keyed values, speakers)', () => {
  // Three calls' worth of turns the rules are about; ts anchors relative dates.
  const semantics: ExtractionSchema = {
    fields: [
      { name: 'city', category: 'temporal', type: 'string', description: 'City the user lives in', hints: ['moved to', 'i live in'] },
      { name: 'date_of_birth', category: 'profile', type: 'date', description: "The user's date of birth" },
      { name: 'offered_rent', category: 'temporal', type: 'money', description: 'Rent the user offers, in INR', keyBy: 'property' },
      { name: 'phone', category: 'profile', type: 'string', description: "The user's phone number" },
    ],
  };
  const line = (id: string, i: number, role: Turn['role'], text: string, extra: Partial<Turn> = {}): Turn => ({
    turnId: id,
    seq: i + 1,
    sessionId: 's2',
    role,
    text,
    ts: T0 + i * 60_000,
    receivedAt: T0 + i * 60_000,
    tokens: 10,
    ...extra,
  });
  const conversation = (): Turn[] => [
    line('u-live', 0, 'user', 'I live in Chennai.'),
    line('u-moved', 1, 'user', 'Actually I moved to Mysore last month.'),
    line('u-dob', 2, 'user', 'My date of birth is 12 March 1990, sorry, I meant 21 March 1990.'),
    line('u-rent', 3, 'user', '30,000 for the MG Road flat and 45,000 for the Indiranagar one.'),
    line('a-office', 4, 'agent', 'You can reach me on 080 4123 4567, my office number.'),
    line('u-sure', 5, 'user', 'Sure, thanks.'),
    line('a-read', 6, 'agent', 'Your number is 98450 12345, correct?'),
    line('u-yes', 7, 'user', 'Yes.', { asrConfidence: 0.35 }),
  ];
  const semanticInput = (): ExtractionInput => ({ schema: semantics, turns: conversation(), knownProfile: {}, now: T0 + 600_000 });

  it('sends the correction, confidence, keyed-value and relative-time rules, and a schema that requires `correction`', async () => {
    await extractor().extract(semanticInput());
    const body = fake.chatRequests[0]!;
    const wire = body.response_format!.json_schema!.schema as { properties: { facts: { items: { properties: Record<string, { type?: unknown }>; required: string[] } } } };
    const item = wire.properties.facts.items;
    expect(item.properties['correction']).toEqual({ type: 'boolean' });
    expect(item.required).toEqual(expect.arrayContaining(['field', 'qualifier', 'value', 'source', 'validFrom', 'correction', 'evidence']));
    expect(JSON.stringify(item.properties['source'])).toContain('confirmed');
    const prompt = body.messages.map((m) => m.content).join('\n');
    expect(prompt).toContain('output only the corrected value');
    expect(prompt).toContain('"sorry, I meant", "no, it\'s", "actually", "correction", "not X but Y"');
    expect(prompt).toContain('"I think maybe 60"');
    expect(prompt).toMatch(/asrConfidence below 0\.6/);
    expect(prompt).toContain("the user's very next turn agreed to it");
    expect(prompt).toContain('its office number');
    expect(prompt).toContain('one fact per entity');
    expect(prompt).toContain('"two weeks ago" = 14 days before that ts');
    expect(prompt).toContain('"40 thousand" = 40000');
    expect(prompt).toContain(`"ts":"${new Date(T0 + 60_000).toISOString()}"`);
    expect(prompt).toContain('keyed by property');
  });

  it('maps a reply: corrections, relative validFrom, one fact per qualifier; drops the agent\'s own number; a misheard "yes" confirms nothing', async () => {
    fake.scriptChat([
      {
        facts: [
          { field: 'city', qualifier: null, value: 'Chennai', source: 'explicit', validFrom: null, correction: false, evidence: ['u-live'] },
          { field: 'city', qualifier: null, value: 'Mysore', source: 'explicit', validFrom: '2025-12-15T10:01:00Z', correction: true, evidence: ['u-moved'] },
          { field: 'date_of_birth', qualifier: null, value: '1990-03-21', source: 'explicit', validFrom: null, correction: true, evidence: ['u-dob'] },
          { field: 'city', qualifier: null, value: 'Mysore', source: 'explicit', validFrom: null, correction: false, ended: true, evidence: ['u-moved'] },
          { field: 'offered_rent', qualifier: 'MG Road', value: { amount: 30_000, currency: 'INR' }, source: 'explicit', validFrom: null, correction: false, evidence: ['u-rent'] },
          { field: 'offered_rent', qualifier: 'Indiranagar', value: { amount: 45_000, currency: 'INR' }, source: 'explicit', validFrom: null, correction: false, evidence: ['u-rent'] },
          // The model slips: the agent's own office number, resting on the agent turn only.
          { field: 'phone', qualifier: null, value: '08041234567', source: 'explicit', validFrom: null, correction: false, evidence: ['a-office'] },
          // A read-back "confirmed" by a turn the recogniser barely heard.
          { field: 'phone', qualifier: null, value: '9845012345', source: 'confirmed', validFrom: null, correction: null, evidence: ['a-read', 'u-yes'] },
        ],
      },
    ]);
    const facts = await extractor().extract(semanticInput());
    expect(facts).toEqual([
      { field: 'city', value: 'Chennai', source: 'explicit', evidence: ['u-live'] },
      { field: 'city', value: 'Mysore', source: 'explicit', validFrom: '2025-12-15T10:01:00.000Z', correction: true, evidence: ['u-moved'] },
      { field: 'date_of_birth', value: '1990-03-21', source: 'explicit', correction: true, evidence: ['u-dob'] },
      { field: 'city', value: 'Mysore', source: 'explicit', ended: true, evidence: ['u-moved'] },
      { field: 'offered_rent', qualifier: 'MG Road', value: { amount: 30_000, currency: 'INR' }, source: 'explicit', evidence: ['u-rent'] },
      { field: 'offered_rent', qualifier: 'Indiranagar', value: { amount: 45_000, currency: 'INR' }, source: 'explicit', evidence: ['u-rent'] },
      { field: 'phone', value: '9845012345', source: 'inferred', evidence: ['a-read', 'u-yes'] },
    ]);
  });

  it('honours a configured low-confidence threshold', async () => {
    const reply = { facts: [{ field: 'phone', qualifier: null, value: '9845012345', source: 'confirmed', validFrom: null, correction: false, evidence: ['a-read', 'u-yes'] }] };
    fake.scriptChat([reply]);
    expect((await extractor({ lowAsrConfidence: 0.3 }).extract(semanticInput()))[0]?.source).toBe('confirmed');
  });
});

describe('OpenAiExtractor.compress', () => {
  it('returns ACU drafts, grounding refs in the segment', async () => {
    fake.onChat((body) => {
      expect(body.response_format?.json_schema?.name).toBe('atomic_context_units');
      return {
        acus: [
          { text: 'Rajiv Kumar (user) has a home-loan approval of ₹80 lakhs as of 2026-01-14.', turnRefs: [ids[0]], validAt: '2026-01-14' },
          { text: '  Rajiv Kumar (user) rejected the Sobha Dream property as too far.  ', turnRefs: ['nope'], validAt: null },
          { text: '   ', turnRefs: [ids[3]], validAt: null },
        ],
      };
    });
    const drafts = await extractor().compress({ turns, userName: 'Rajiv Kumar', agentName: 'Priya', now: T0 + 60_000 });
    expect(drafts).toEqual([
      { text: 'Rajiv Kumar (user) has a home-loan approval of ₹80 lakhs as of 2026-01-14.', turnRefs: [ids[0]], validAt: '2026-01-14T00:00:00.000Z' },
      { text: 'Rajiv Kumar (user) rejected the Sobha Dream property as too far.', turnRefs: ids },
    ]);
    const prompt = fake.chatRequests[0]!.messages.map((m) => m.content).join('\n');
    expect(prompt).toContain('User: Rajiv Kumar');
    expect(prompt).toContain('Agent: Priya');
    expect(prompt).toMatch(/No pronouns/);
    expect(prompt).toMatch(/No relative time/);
    expect(prompt).toContain(ids[2]!);
  });

  it('rejects garbage as retryable after the bounded retries', async () => {
    fake.mode = 'garbage';
    const err = await rejection(extractor({ maxRetries: 0 }).compress({ turns, now: T0 }));
    expect(err.retryable).toBe(true);
    expect(fake.chatRequests).toHaveLength(1);
  });
});

describe('OpenAiEmbedder', () => {
  const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

  it.each(['float', 'base64'] as const)('returns unit vectors of the configured dimension (%s)', async (encodingFormat) => {
    const embedder = new OpenAiEmbedder({ baseURL: fake.url, apiKey: 'k', model: 'emb', dimensions: 48, timeoutMs: 5_000, encodingFormat });
    const texts = ['budget of 80 lakhs', 'site visit at Prestige Lakeside', 'budget of 80 lakhs'];
    const vecs = await embedder.embed(texts);
    expect(vecs).toHaveLength(3);
    for (const v of vecs) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(48);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    expect(dot(vecs[0]!, vecs[2]!)).toBeCloseTo(1, 5);
    expect(dot(vecs[0]!, vecs[1]!)).toBeLessThan(0.9);
    const body = fake.embeddingRequests[0]!;
    expect(body).toMatchObject({ model: 'emb', input: texts, dimensions: 48, encoding_format: encodingFormat });
  });

  it('agrees between the float and base64 paths', async () => {
    const opts = { baseURL: fake.url, apiKey: 'k', model: 'emb', dimensions: 32, timeoutMs: 5_000 };
    const [a] = await new OpenAiEmbedder({ ...opts, encodingFormat: 'float' }).embed(['Rajiv Kumar']);
    const [b] = await new OpenAiEmbedder({ ...opts, encodingFormat: 'base64' }).embed(['Rajiv Kumar']);
    expect(dot(a!, b!)).toBeCloseTo(1, 5);
  });

  it('splits large inputs into batches of at most 256', async () => {
    const embedder = new OpenAiEmbedder({ baseURL: fake.url, apiKey: 'k', model: 'emb', dimensions: 8, timeoutMs: 5_000 });
    const vecs = await embedder.embed(Array.from({ length: 300 }, (_, i) => `text ${i}`));
    expect(vecs).toHaveLength(300);
    expect(fake.embeddingRequests.map((r) => (r['input'] as string[]).length)).toEqual([256, 44]);
    expect(await embedder.embed([])).toEqual([]);
  });

  it('fails clearly, not retryable, when the model returns another dimension', async () => {
    fake.honorRequestedDimensions = false; // fixed 64-d model
    const embedder = new OpenAiEmbedder({ baseURL: fake.url, apiKey: 'k', model: 'emb', dimensions: 128, timeoutMs: 5_000 });
    const err = await rejection(embedder.embed(['x']));
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('returned 64 dimensions, configured 128');
  });

  it('classifies 500 as retryable; the fake answers base64 by default', async () => {
    const embedder = new OpenAiEmbedder({ baseURL: fake.url, apiKey: 'k', model: 'emb', dimensions: 8, timeoutMs: 5_000, maxRetries: 0 });
    fake.mode = 'error500';
    expect((await rejection(embedder.embed(['x']))).retryable).toBe(true);
    fake.mode = null;
    const raw = new OpenAI({ baseURL: fake.url, apiKey: 'k', maxRetries: 0 });
    // sanity of the fake's default (absent encoding_format = base64, decoded by the SDK)
    const res = await raw.embeddings.create({ model: 'emb', input: 'x', dimensions: 8 });
    expect(res.data[0]!.embedding).toHaveLength(8);
  });
});

describe('fake OpenAI server', () => {
  it('answers 404 on unknown routes and records every request', async () => {
    const res = await fetch(`${fake.url}/models`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(404);
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/models']);
  });
});
