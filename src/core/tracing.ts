import { context, INVALID_SPAN_CONTEXT, isSpanContextValid, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span } from '@opentelemetry/api';
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

/** Mark `span` failed by `err`: status ERROR, `error.type` = the memgate code (else the error's name). */
export function failSpan(span: Span, err: unknown): void {
  if (!span.isRecording()) return;
  span.setAttribute('error.type', err instanceof MemgateError ? err.code : err instanceof Error ? err.name : 'error');
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
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
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * A span for one call-path operation on a user's memory (the gateway's observed service). Its
 * attributes are set only when it records: with no SDK registered the call costs the API's own
 * non-recording span and nothing else. Run the work with `withSpan`, end it with `span.end()`
 * (after `failSpan` on an error).
 */
export function startCallSpan(name: string, operation: MemoryOperation | null, scope: { tenantId: string; agentId: string; userId: string }, sessionId?: string): Span {
  const span = tracer.startSpan(name);
  if (span.isRecording()) {
    span.setAttributes(scopeAttributes(scope, sessionId));
    if (operation !== null) span.setAttribute('gen_ai.operation.name', operation);
  }
  return span;
}

/**
 * Call `fn` with `span` active (so spans and log lines inside it are its children), synchronously:
 * a synchronous `fn` stays synchronous. A span with no valid context (the no-op one, no SDK and
 * no propagated parent) is not made active: no context is allocated for it.
 */
export function withSpan<A extends unknown[], R>(span: Span, fn: (...args: A) => R, thisArg: unknown, ...args: A): R {
  const sc = span.spanContext();
  if (sc === INVALID_SPAN_CONTEXT || !isSpanContextValid(sc)) return fn.apply(thisArg, args);
  return context.with(trace.setSpan(context.active(), span), fn, thisArg, ...args);
}

/** `startCallSpan` + `withSpan` for an async operation: the span ends when `fn` settles, failed on a throw. */
export async function inCallSpan<T>(
  name: string,
  operation: MemoryOperation | null,
  scope: { tenantId: string; agentId: string; userId: string },
  sessionId: string | undefined,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const span = startCallSpan(name, operation, scope, sessionId);
  try {
    return await withSpan(span, fn, undefined, span);
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Run `fn` in a new trace (root span `name`) linked to the span active now, if any: background
 * work (an extraction run) that outlives the request or append that asked for it gets its own
 * trace, and the link leads back to what caused it.
 */
export async function inRootSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>): Promise<T> {
  const cause = trace.getSpanContext(context.active());
  const links: Link[] = cause !== undefined && isSpanContextValid(cause) ? [{ context: cause }] : [];
  return tracer.startActiveSpan(name, { root: true, attributes, links }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A span context as plain data (it crosses a worker thread's message port), or null when none is active. */
export interface WireSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

/** The active span's context as plain data, for work handed to another thread; null when no valid one is active. */
export function activeSpanContext(): WireSpanContext | null {
  const sc = trace.getSpanContext(context.active());
  if (sc === undefined || !isSpanContextValid(sc)) return null;
  return { traceId: sc.traceId, spanId: sc.spanId, traceFlags: sc.traceFlags };
}

/** A context whose (remote) active span is `wire`, to run another thread's share of the work under. */
export function contextFrom(wire: WireSpanContext | null | undefined): Context {
  const root = context.active();
  if (!wire) return root;
  return trace.setSpanContext(root, { ...wire, isRemote: true });
}

/** The active span's ids for a log line, or nothing when no recording span is active. */
export function traceFields(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getSpan(context.active());
  if (!span || !span.isRecording()) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
