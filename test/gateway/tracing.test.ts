import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { InProcessEventBus } from '../../src/adapters/inprocess/index.ts';
import { MemgateError } from '../../src/core/errors.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { EventOutbox } from '../../src/gateway/events.ts';
import { GatewayMetrics } from '../../src/gateway/metrics.ts';
import { observeCalls } from '../../src/gateway/observed-service.ts';
import type { AckReply, MemoryApi } from '../../src/service/api.ts';
import { registerInMemoryTracing } from '../support/tracing.ts';
import { startTestServer, uniq, type TestServer } from './support/real-server.ts';
import { http, WsTester } from './support/ws-tester.ts';

/** The gateway's spans (observed-service.ts) under a host SDK with the W3C propagator, as NodeSDK registers them. */
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const traceparent = (spanId: string) => `00-${TRACE_ID}-${spanId}-01`;

let otel: ReturnType<typeof registerInMemoryTracing>;
let srv: TestServer;
beforeAll(async () => {
  otel = registerInMemoryTracing();
  srv = await startTestServer();
});
afterAll(async () => {
  await srv.close();
  await otel.stop();
});
beforeEach(() => otel.reset());

const only = (name: string): ReadableSpan => {
  const spans = otel.named(name);
  expect(spans.map((s) => s.name)).toEqual([name]);
  return spans[0]!;
};

describe('spans of a call (the observed service, every edge)', () => {
  it("over the WebSocket: start, append, search (a span per tier under it) and end, children of the upgrade's traceparent", async () => {
    const agentId = uniq('a');
    const userId = uniq('u');
    const ws = await WsTester.open(srv.wsUrl, undefined, { traceparent: traceparent('00f067aa0ba902b7') });
    try {
      const started = await ws.request({ op: 'start', agentId, userId });
      const sessionId = started['sessionId'] as string;
      expect(await ws.request({ op: 'append', role: 'user', text: 'My name is Asha and I live in Pune', turnId: 't1' })).toMatchObject({ op: 'ack', seq: 1 });
      expect(await ws.request({ op: 'search', query: 'where does she live', k: 3 })).toMatchObject({ op: 'results' });
      expect(await ws.request({ op: 'end' })).toMatchObject({ op: 'ended' });

      const scope = { 'gen_ai.agent.id': agentId, 'gen_ai.memory.store.id': `${agentId}/${userId}`, 'memgate.tenant': 'default' };
      const start = only('memgate.session.start');
      const append = only('memgate.append');
      const search = only('memgate.search');
      const end = only('memgate.session.end');
      for (const span of [start, append, search, end]) {
        expect(span.spanContext().traceId).toBe(TRACE_ID);
        expect(span.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
        expect(span.parentSpanContext?.isRemote).toBe(true);
        expect(span.kind).toBe(SpanKind.INTERNAL);
        expect(span.status.code).toBe(SpanStatusCode.UNSET);
        expect(span.attributes).toMatchObject(scope);
      }
      expect(start.attributes).toMatchObject({ 'gen_ai.conversation.id': sessionId, 'memgate.session.reopened': false });
      expect(append.attributes).toMatchObject({ 'gen_ai.operation.name': 'create_memory', 'gen_ai.conversation.id': sessionId, 'memgate.turn.seq': 1, 'memgate.turn.duplicate': false });
      expect(search.attributes).toMatchObject({ 'gen_ai.operation.name': 'search_memory', 'gen_ai.memory.record.count': expect.any(Number) });
      expect(end.attributes).toMatchObject({ 'gen_ai.conversation.id': sessionId, 'memgate.session.end_reason': 'end', 'memgate.session.ended': true });
      // No user text on any span.
      for (const span of otel.spans()) expect(JSON.stringify(span.attributes)).not.toMatch(/Asha|Pune|where does/);

      const tiers = otel.named('memgate.search.tier');
      expect(tiers.map((t) => t.attributes['memgate.tier'])).toEqual(expect.arrayContaining(['memory', 'acu.vector']));
      for (const tier of tiers) expect(tier.parentSpanContext?.spanId).toBe(search.spanContext().spanId);
    } finally {
      await ws.close();
    }
  });

  it('a failed start: status ERROR with the stable code; without a traceparent the span is a root', async () => {
    const ws = await WsTester.open(srv.wsUrl);
    try {
      const sessionId = uniq('s');
      await ws.request({ op: 'start', agentId: 'a1', userId: uniq('u'), sessionId });
      otel.reset();
      // The session id belongs to another user: refused with `conflict`.
      expect(await ws.request({ op: 'start', agentId: 'a1', userId: uniq('u'), sessionId })).toMatchObject({ op: 'error', code: 'conflict' });
      const start = only('memgate.session.start');
      expect(start.status.code).toBe(SpanStatusCode.ERROR);
      expect(start.attributes['error.type']).toBe('conflict');
      expect(start.attributes['gen_ai.conversation.id']).toBe(sessionId);
      expect(start.parentSpanContext).toBeUndefined();
    } finally {
      await ws.close();
    }
  });

  it("over HTTP: the append continues the request's trace; a flush's extraction is its own trace, linked to it, with a span per stage", async () => {
    const agentId = uniq('a');
    const userId = uniq('u');
    const sessionId = (await http(srv.base, 'POST', '/v1/sessions', { body: { agentId, userId } })).body.sessionId as string;
    const headers = { traceparent: traceparent('a3ce929d0e0e4736') };
    for (const [i, text] of ['My name is Asha Rao.', 'I live in Pune and my budget is 80 lakh.'].entries()) {
      expect((await http(srv.base, 'POST', `/v1/sessions/${sessionId}/turns`, { body: { role: 'user', text, turnId: `h${i}` }, headers })).status).toBe(200);
    }
    const appends = otel.named('memgate.append');
    expect(appends).toHaveLength(2);
    for (const a of appends) expect(a.parentSpanContext?.spanId).toBe('a3ce929d0e0e4736');

    otel.reset();
    const flushed = await http(srv.base, 'POST', `/v1/agents/${agentId}/users/${userId}/flush`, { headers: { traceparent: traceparent('b7ad6b7169203331') } });
    expect(flushed).toMatchObject({ status: 200, body: { ran: true } });
    const run = only('memgate.extraction');
    expect(run.parentSpanContext).toBeUndefined();
    expect(run.spanContext().traceId).not.toBe(TRACE_ID);
    expect(run.links.map((l) => l.context.spanId)).toEqual(['b7ad6b7169203331']);
    expect(run.attributes).toMatchObject({
      'gen_ai.operation.name': 'update_memory',
      'gen_ai.memory.store.id': `${agentId}/${userId}`,
      'memgate.extraction.ran': true,
      'memgate.extraction.turns': 2,
      'memgate.extraction.facts': flushed.body.factsExtracted,
      'memgate.memory.version': flushed.body.version,
    });
    const stages = ['memgate.extraction.read', 'memgate.extraction.plan', 'memgate.extraction.commit'].map(only);
    for (const stage of stages) expect(stage.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    const plan = stages[1]!;
    for (const name of ['memgate.extraction.facts', 'memgate.extraction.compress']) expect(only(name).parentSpanContext?.spanId).toBe(plan.spanContext().spanId);
  });
});

describe('the append span keeps a synchronous append synchronous', () => {
  const scope = { tenantId: 't1', agentId: 'a1', userId: 'u1' };
  const observed = (appendTurn: MemoryApi['appendTurn']) => observeCalls({ appendTurn } as unknown as MemoryApi, new GatewayMetrics(), new EventOutbox(new InProcessEventBus(), silentLogger));

  it('acks in the same tick, with the span active inside the durable write', () => {
    let inside: string | undefined;
    const service = observed(() => {
      inside = trace.getActiveSpan()?.spanContext().spanId;
      return { turnId: 't1', seq: 7, duplicate: false } satisfies AckReply;
    });
    const ack = service.appendTurn(scope, 's1', { role: 'user', text: 'hi' });
    expect(ack).not.toBeInstanceOf(Promise);
    expect(ack).toMatchObject({ seq: 7 });
    const span = only('memgate.append');
    expect(inside).toBe(span.spanContext().spanId);
    expect(span.attributes).toMatchObject({ 'gen_ai.conversation.id': 's1', 'memgate.turn.seq': 7 });
  });

  it('a synchronous throw is thrown synchronously and ends the span as ERROR with its code', () => {
    const service = observed(() => {
      throw new MemgateError('too_large', 'turn text too large');
    });
    expect(() => service.appendTurn(scope, 's1', { role: 'user', text: 'hi' })).toThrow(MemgateError);
    const span = only('memgate.append');
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(span.attributes['error.type']).toBe('too_large');
  });

  it('an async rejection ends the span as ERROR too', async () => {
    const service = observed(() => Promise.reject(new MemgateError('unavailable', 'buffer down')));
    await expect(service.appendTurn(scope, 's1', { role: 'user', text: 'hi' })).rejects.toMatchObject({ code: 'unavailable' });
    expect(only('memgate.append').attributes['error.type']).toBe('unavailable');
  });
});
