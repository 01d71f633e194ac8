// A host's OpenTelemetry SDK for a child process under test (`node --import ./test/support/otel-file-sdk.mjs …`):
// every ended span is appended as one JSON line to MEMGATE_TEST_SPANS_FILE, with the thread it ended on.
import { appendFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';

const file = process.env.MEMGATE_TEST_SPANS_FILE;
if (!file) throw new Error('otel-file-sdk.mjs: set MEMGATE_TEST_SPANS_FILE');
const toFile = {
  onStart: () => {},
  onEnd: (span) =>
    appendFileSync(
      file,
      JSON.stringify({
        threadId,
        name: span.name,
        traceId: span.spanContext().traceId,
        spanId: span.spanContext().spanId,
        parentSpanId: span.parentSpanContext?.spanId ?? null,
        links: span.links.map((l) => l.context.spanId),
        status: span.status.code,
        attributes: span.attributes,
      }) + '\n',
    ),
  forceFlush: async () => {},
  shutdown: async () => {},
};
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [toFile] }));
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
