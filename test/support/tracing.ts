import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

/**
 * A host's OpenTelemetry SDK, as an application would register it (provider, async-hooks context
 * manager, W3C trace-context propagator, as NodeSDK does), exporting to memory: the spans memgate
 * makes through `@opentelemetry/api` land in `spans()`. `stop()` unregisters it (the global API
 * then returns to no-op spans).
 */
export function registerInMemoryTracing(): { spans(): ReadableSpan[]; named(name: string): ReadableSpan[]; reset(): void; stop(): Promise<void> } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    spans: () => exporter.getFinishedSpans(),
    named: (name) => exporter.getFinishedSpans().filter((s) => s.name === name),
    reset: () => exporter.reset(),
    async stop() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
