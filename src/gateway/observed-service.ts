import type { Scope, TurnInput } from '../core/types.ts';
import { failSpan, inCallSpan, startCallSpan, withSpan } from '../core/tracing.ts';
import type { AckReply, MemoryApi } from '../service/api.ts';
import { scopeEvent } from './context.ts';
import type { EndOptions, ObservedService } from './observed-api.ts';
import type { EventOutbox } from './events.ts';
import type { GatewayMetrics } from './metrics.ts';

/**
 * The one place where the gateway's call events, latency histograms and spans are raised: every
 * edge (WebSocket, HTTP, Vapi, MCP, any later one) calls the service through this wrapper, so a
 * call looks the same on the dashboard, in /metrics and in a trace whichever way it came in. The
 * append histogram measures from the call into the service to its ack (encoding and sending the
 * reply excluded). Spans (`memgate.session.start`, `memgate.append`, `memgate.session.end`,
 * `memgate.search`, `memgate.context`, `memgate.forget`) are children of whatever the edge made
 * active (a propagated `traceparent`); with no OpenTelemetry SDK registered they are no-ops.
 */
export function observeCalls(service: MemoryApi, metrics: GatewayMetrics, outbox: EventOutbox): ObservedService {
  const observed: Partial<ObservedService> = {
    startSession(scope, sessionId) {
      return inCallSpan('memgate.session.start', null, scope, sessionId, async (span) => {
        const t0 = performance.now();
        const reply = await service.startSession(scope, sessionId);
        metrics.start.observe(performance.now() - t0);
        if (span.isRecording()) span.setAttributes({ 'gen_ai.conversation.id': reply.sessionId, 'memgate.session.reopened': reply.reopened });
        outbox.push(scopeEvent('session.started', scope, reply.sessionId, reply.reopened ? { reopened: true } : {}));
        return reply;
      });
    },
    startSessionEncoded(scope, sessionId, options) {
      return inCallSpan('memgate.session.start', null, scope, sessionId, async (span) => {
        const t0 = performance.now();
        const started = await service.startSessionEncoded(scope, sessionId, options);
        metrics.start.observe(performance.now() - t0);
        if (span.isRecording()) span.setAttributes({ 'gen_ai.conversation.id': started.sessionId, 'memgate.session.reopened': started.reopened });
        outbox.push(scopeEvent('session.started', scope, started.sessionId, started.reopened ? { reopened: true } : {}));
        return started;
      });
    },
    appendTurn(scope: Scope, sessionId: string, input: TurnInput) {
      const t0 = performance.now();
      // The hot path: with no SDK this is the API's non-recording span, no attributes, no context.
      const span = startCallSpan('memgate.append', 'create_memory', scope, sessionId);
      const observe = (ack: AckReply): AckReply => {
        const ackMs = performance.now() - t0;
        metrics.append.observe(ackMs);
        if (span.isRecording()) span.setAttributes({ 'memgate.turn.seq': ack.seq, 'memgate.turn.duplicate': ack.duplicate });
        span.end();
        // The turn is durable once acked, whether or not the caller is still there to read the ack.
        if (ack.duplicate) outbox.push(scopeEvent('turn.duplicate', scope, sessionId, { turnId: ack.turnId, seq: ack.seq }));
        else outbox.push(scopeEvent('turn.appended', scope, sessionId, { turnId: ack.turnId, seq: ack.seq, ackMs: Math.round(ackMs * 1000) / 1000 }));
        return ack;
      };
      let result: ReturnType<MemoryApi['appendTurn']>;
      try {
        result = withSpan(span, service.appendTurn, service, scope, sessionId, input);
      } catch (err) {
        failSpan(span, err);
        span.end();
        throw err;
      }
      // A synchronous durable write stays synchronous: the WebSocket acks it inside its callback.
      if (!(result instanceof Promise)) return observe(result);
      return result.then(observe, (err: unknown) => {
        failSpan(span, err);
        span.end();
        throw err;
      });
    },
    search(scope, query, options) {
      // One child span per tier raced comes from the cascade (memory/search-cascade.ts).
      return inCallSpan('memgate.search', 'search_memory', scope, undefined, async (span) => {
        const t0 = performance.now();
        const reply = await service.search(scope, query, options);
        metrics.search.observe(performance.now() - t0);
        if (span.isRecording()) span.setAttributes({ 'gen_ai.memory.record.count': reply.results.length, 'memgate.search.partial': reply.partial === true });
        return reply;
      });
    },
    readContext(scope) {
      return inCallSpan('memgate.context', 'search_memory', scope, undefined, () => service.readContext(scope));
    },
    forget(scope) {
      return inCallSpan('memgate.forget', 'delete_memory', scope, undefined, () => service.forget(scope));
    },
    endSession(scope, sessionId, options: EndOptions = {}) {
      const { reason = 'end', lastSeq, ifGeneration } = options;
      return inCallSpan('memgate.session.end', null, scope, sessionId, async (span) => {
        const ended = await service.endSession(scope, sessionId, ifGeneration === undefined ? {} : { ifGeneration });
        if (span.isRecording()) span.setAttributes({ 'memgate.session.end_reason': reason, 'memgate.session.ended': ended });
        // A conditional end (a drop's) that lost to a reopen ended nothing: no event.
        if (ended || ifGeneration === undefined) outbox.push(scopeEvent('session.ended', scope, sessionId, { reason, ...(lastSeq === undefined ? {} : { lastSeq }) }));
        return ended;
      });
    },
  };
  return new Proxy(service as ObservedService, {
    get(target, prop) {
      if (Object.prototype.hasOwnProperty.call(observed, prop)) return observed[prop as keyof ObservedService];
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
