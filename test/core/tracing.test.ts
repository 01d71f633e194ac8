import { context, INVALID_SPAN_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemgateError } from '../../src/core/errors.ts';
import { createLogger } from '../../src/core/logger.ts';
import { activeSpanContext, contextFrom, inRootSpan, inSpan, scopeAttributes, startCallSpan, traceFields, withSpan } from '../../src/core/tracing.ts';
import { registerInMemoryTracing } from '../support/tracing.ts';

describe('tracing without an SDK', () => {
  it('runs the work and records nothing; log lines carry no trace ids', async () => {
    expect(await inSpan('memgate.test', {}, async (span) => (span.isRecording() ? 'recording' : 'no-op'))).toBe('no-op');
    expect(traceFields()).toBeUndefined();
  });

  it("a call span is the API's non-recording one, never made active: the work runs as a plain synchronous call", () => {
    const span = startCallSpan('memgate.append', 'create_memory', { tenantId: 't', agentId: 'a', userId: 'u' }, 's');
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext()).toBe(INVALID_SPAN_CONTEXT);
    const active = context.active();
    const out = withSpan(span, (x: number) => (context.active() === active ? x * 2 : -1), undefined, 21);
    expect(out).toBe(42);
    expect(activeSpanContext()).toBeNull();
  });
});

describe('tracing with a host SDK (in-memory exporter)', () => {
  let otel: ReturnType<typeof registerInMemoryTracing>;
  beforeAll(() => {
    otel = registerInMemoryTracing();
  });
  afterAll(() => otel.stop());

  it('nests spans, names the memory they touch, and puts the trace id on log lines inside them', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', {}, (l) => lines.push(l));
    const scope = { tenantId: 't1', agentId: 'real-estate', userId: 'asha' };
    await inSpan('memgate.search', { ...scopeAttributes(scope, 's-1'), 'gen_ai.operation.name': 'search_memory' }, async () => {
      await inSpan('memgate.search.tier', { 'memgate.tier': 'fact' }, async () => logger.info('tier done'));
    });
    const [tier, search] = otel.spans();
    expect(search!.name).toBe('memgate.search');
    expect(search!.attributes).toMatchObject({
      'gen_ai.operation.name': 'search_memory',
      'gen_ai.memory.store.id': 'real-estate/asha',
      'gen_ai.conversation.id': 's-1',
      'gen_ai.agent.id': 'real-estate',
    });
    expect(tier!.parentSpanContext?.spanId).toBe(search!.spanContext().spanId);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line['trace_id']).toBe(tier!.spanContext().traceId);
    expect(line['span_id']).toBe(tier!.spanContext().spanId);
  });

  it('records a failure with its memgate code and rethrows it', async () => {
    otel.reset();
    await expect(inSpan('memgate.append', {}, async () => Promise.reject(new MemgateError('not_started', 'no call')))).rejects.toMatchObject({ code: 'not_started' });
    const [span] = otel.spans();
    expect(span!.status.code).toBe(SpanStatusCode.ERROR);
    expect(span!.attributes['error.type']).toBe('not_started');
  });

  it('background work gets its own trace, linked to the span that asked for it, across a thread boundary as plain data', async () => {
    otel.reset();
    let wire: ReturnType<typeof activeSpanContext> = null;
    await inSpan('memgate.flush', {}, async () => {
      wire = activeSpanContext();
    });
    const [asker] = otel.spans();
    expect(wire).toEqual({ traceId: asker!.spanContext().traceId, spanId: asker!.spanContext().spanId, traceFlags: 1 });
    // The other thread: the wire context made active, then the run.
    await context.with(contextFrom(wire), () => inRootSpan('memgate.extraction', { 'gen_ai.operation.name': 'update_memory' }, async () => trace.getActiveSpan()));
    const run = otel.spans()[1]!;
    expect(run.name).toBe('memgate.extraction');
    expect(run.parentSpanContext).toBeUndefined();
    expect(run.spanContext().traceId).not.toBe(asker!.spanContext().traceId);
    expect(run.links.map((l) => l.context.spanId)).toEqual([asker!.spanContext().spanId]);
  });
});
