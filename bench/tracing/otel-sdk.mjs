// A host's OpenTelemetry SDK, registered before memgate starts, the way the README shows
// (`node --import ./otel-sdk.mjs …`): a tracer provider, the async-hooks context manager, and a
// batch processor whose exporter drops every batch — everything a real exporter costs the
// process except the network. The `append-tracing` bench suite runs memgate with it to measure
// what recording every span costs the append path. With MEMGATE_BENCH_SPANS_FILE set, the
// spans ended, by name, are written there when the process exits (the bench checks they were).
import { writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

const dropping = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: async () => {},
  forceFlush: async () => {},
};
const ended = new Map();
const counting = {
  onStart: () => {},
  onEnd: (span) => ended.set(span.name, (ended.get(span.name) ?? 0) + 1),
  forceFlush: async () => {},
  shutdown: async () => {},
};
const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropping), counting] });
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(provider);

const file = process.env.MEMGATE_BENCH_SPANS_FILE;
// The extraction thread loads this too (it inherits --import): only the main thread's count is written.
if (file && isMainThread) process.once('exit', () => writeFileSync(file, JSON.stringify(Object.fromEntries(ended))));
