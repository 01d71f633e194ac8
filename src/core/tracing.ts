import { context, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { MemgateError } from './errors.ts';

/**
 * OpenTelemetry through `@opentelemetry/api` only: every span is a no-op (a shared non-recording
 * span, no allocation worth measuring) until the host registers an SDK, so the call path pays
 * nothing by default. Attribute names follow the GenAI semantic conventions' memory operations
 * (`gen_ai.operation.name` = create_memory / search_memory / update_memory / delete_memory,
 * `gen_ai.memory.*`) where they fit and `memgate.*` elsewhere. User content (turn text, queries)
 * is never put on a span: the conventions make it opt-in, and memgate has no opt-in yet.
 */
const tracer = trace.getTracer('memgate');

/** GenAI memory operation names (semantic conventions, development status). */
export type MemoryOperation = 'create_memory' | 'search_memory' | 'update_memory' | 'delete_memory';

/** Attributes naming whose memory a span touches. */
export function scopeAttributes(scope: { tenantId: string; agentId: string; userId: string }, sessionId?: string): Attributes {
  return {
    'gen_ai.agent.id': scope.agentId,
    'gen_ai.memory.store.id': `${scope.agentId}/${scope.userId}`,
    'memgate.tenant': scope.tenantId,
    ...(sessionId === undefined ? {} : { 'gen_ai.conversation.id': sessionId }),
  };
}

/**
 * Run `fn` in a span named `name` (the active span becomes its parent): the span ends when `fn`
 * settles, records a thrown error (status ERROR, `error.type` = the memgate code) and rethrows it.
 */
export async function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.setAttribute('error.type', err instanceof MemgateError ? err.code : err instanceof Error ? err.name : 'error');
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The active span's ids for a log line, or nothing when no recording span is active. */
export function traceFields(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getSpan(context.active());
  if (!span || !span.isRecording()) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
