import type { Logger } from '../core/logger.ts';
import type { Config } from '../config/config-schema.ts';
import type { EventBus, MemgateEvent } from '../ports/event-bus.ts';
import type { JobBus } from '../ports/job-bus.ts';
import type { MemoryApi } from '../service/api.ts';
import type { Authenticator } from './auth.ts';
import type { CallStore } from './call-sweeper.ts';
import type { DroppedCalls } from './dropped-calls.ts';
import type { EventOutbox, EventRelay } from './events.ts';
import type { LiveState } from './live-state.ts';
import type { ObservedService } from './observed-api.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { InFlight } from './shutdown.ts';

/**
 * What the gateway needs from a wired runtime (src/app/wiring.ts `Runtime` satisfies
 * it): narrow on purpose, so tests can stand a fake service behind real sockets.
 */
export interface GatewayRuntime {
  readonly config: Readonly<Config>;
  readonly service: MemoryApi;
  /** `buffer`: the shared session store the sweep of dropped calls reads; absent: drops are this process's alone, nothing is swept. */
  readonly ports: { readonly events: EventBus; readonly bus: Pick<JobBus, 'depth'>; readonly buffer?: CallStore };
  readonly logger: Logger;
  /** Probe the configured servers (`/v1/health`); absent: nothing to probe. */
  reachability?(): Promise<Array<{ server: string; address: string; ok: boolean; problem: string | null; ms: number }>>;
}

/** Limits read once from `config.server`. */
export interface GatewayLimits {
  readonly maxTurnBytes: number;
  readonly maxPayloadBytes: number;
  readonly maxBackpressureBytes: number;
  readonly idleTimeoutS: number;
}

/** Shared state of one running gateway, handed to the WebSocket and HTTP handlers. */
export interface GatewayContext {
  readonly runtime: GatewayRuntime;
  /** The runtime's service behind the one wrapper that raises call events and histograms (observed-service.ts). */
  readonly service: ObservedService;
  readonly logger: Logger;
  readonly metrics: GatewayMetrics;
  readonly inflight: InFlight;
  readonly outbox: EventOutbox;
  readonly relay: EventRelay;
  /** Live calls and the extraction lane per tenant, from the events (dashboard routes). */
  readonly live: LiveState;
  readonly auth: Authenticator;
  readonly limits: GatewayLimits;
  /** Calls whose socket closed without `end`, waiting out the grace before they are ended. */
  readonly drops: DroppedCalls;
  /** This gateway's id in the shared store, named on the calls whose sockets it holds; null without a store. */
  readonly holder: string | null;
  /** Set once shutdown begins: new requests get `unavailable`. */
  draining: boolean;
}

/** A gateway-made event for a scope (data holds ids and counts, never user text). */
export function scopeEvent(type: MemgateEvent['type'], scope: { tenantId: string; agentId: string; userId: string }, sessionId: string, data: Record<string, unknown>): MemgateEvent {
  return { type, tenantId: scope.tenantId, agentId: scope.agentId, userId: scope.userId, sessionId, at: Date.now(), data };
}
