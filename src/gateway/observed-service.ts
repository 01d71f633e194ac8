import type { Scope, TurnInput } from '../core/types.ts';
import type { AckReply, MemoryApi } from '../service/api.ts';
import { scopeEvent } from './context.ts';
import type { EndOptions, ObservedService } from './observed-api.ts';
import type { EventOutbox } from './events.ts';
import type { GatewayMetrics } from './metrics.ts';

/**
 * The one place where the gateway's call events and latency histograms are raised: every edge
 * (WebSocket, HTTP, Vapi, MCP, any later one) calls the service through this wrapper, so a call
 * looks the same on the dashboard and in /metrics whichever way it came in. The append histogram
 * measures from the call into the service to its ack (encoding and sending the reply excluded).
 */
export function observeCalls(service: MemoryApi, metrics: GatewayMetrics, outbox: EventOutbox): ObservedService {
  const observed: Partial<ObservedService> = {
    async startSession(scope, sessionId) {
      const t0 = performance.now();
      const reply = await service.startSession(scope, sessionId);
      metrics.start.observe(performance.now() - t0);
      outbox.push(scopeEvent('session.started', scope, reply.sessionId, reply.reopened ? { reopened: true } : {}));
      return reply;
    },
    async startSessionEncoded(scope, sessionId, options) {
      const t0 = performance.now();
      const started = await service.startSessionEncoded(scope, sessionId, options);
      metrics.start.observe(performance.now() - t0);
      outbox.push(scopeEvent('session.started', scope, started.sessionId, started.reopened ? { reopened: true } : {}));
      return started;
    },
    appendTurn(scope: Scope, sessionId: string, input: TurnInput) {
      const t0 = performance.now();
      const observe = (ack: AckReply): AckReply => {
        const ackMs = performance.now() - t0;
        metrics.append.observe(ackMs);
        // The turn is durable once acked, whether or not the caller is still there to read the ack.
        if (ack.duplicate) outbox.push(scopeEvent('turn.duplicate', scope, sessionId, { turnId: ack.turnId, seq: ack.seq }));
        else outbox.push(scopeEvent('turn.appended', scope, sessionId, { turnId: ack.turnId, seq: ack.seq, ackMs: Math.round(ackMs * 1000) / 1000 }));
        return ack;
      };
      const result = service.appendTurn(scope, sessionId, input);
      // A synchronous durable write stays synchronous: the WebSocket acks it inside its callback.
      return result instanceof Promise ? result.then(observe) : observe(result);
    },
    async search(scope, query, options) {
      const t0 = performance.now();
      const reply = await service.search(scope, query, options);
      metrics.search.observe(performance.now() - t0);
      return reply;
    },
    async endSession(scope, sessionId, options: EndOptions = {}) {
      const { reason = 'end', lastSeq, ifGeneration } = options;
      const ended = await service.endSession(scope, sessionId, ifGeneration === undefined ? {} : { ifGeneration });
      // A conditional end (a drop's) that lost to a reopen ended nothing: no event.
      if (ended || ifGeneration === undefined) outbox.push(scopeEvent('session.ended', scope, sessionId, { reason, ...(lastSeq === undefined ? {} : { lastSeq }) }));
      return ended;
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
