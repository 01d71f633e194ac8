import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

/**
 * A host's OpenTelemetry SDK, as an application would register it, exporting to memory: the
 * spans memgate makes through `@opentelemetry/api` land in `spans()`. `stop()` unregisters it
 * (the global API then returns to no-op spans).
 */
export function registerInMemoryTracing(): { spans(): ReadableSpan[]; reset(): void; stop(): Promise<void> } {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  return {
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    async stop() {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}
