import { ROOT_CONTEXT, type Context } from '@opentelemetry/api';
import type { WebSocket } from 'uWebSockets.js';
import type { Scope } from '../core/types.ts';
import { encodeFrame } from './codec.ts';
import type { GatewayContext } from './context.ts';
import { toEdgeError } from '../core/edge-error.ts';
import type { Subscriptions } from './events.ts';
import type { RequestId } from './frames.ts';
import { inContext } from './trace-context.ts';

/** Per-connection state: one connection carries one call (docs/protocol.md). */
export interface Connection {
  readonly tenantId: string;
  /** Set by a successful `start`; null before it and after `end`. */
  scope: Scope | null;
  sessionId: string | null;
  /** The call's start generation as this connection's `start` left it (a dropped call's end names it). */
  generation: number;
  /** The call this connection ended: a turn of it re-sent after `end` is still answered as a duplicate. */
  ended: { scope: Scope; sessionId: string } | null;
  /** seq of the last acked turn of this call. */
  seq: number;
  /** Encoding of the last request (live events follow the subscribe request's encoding). */
  binary: boolean;
  /** True after uWS's close event: the socket must not be touched again. */
  closed: boolean;
  /** A start or end in flight: requests behind it wait for it, in order. */
  barrier: Promise<void> | null;
  /** A send found backpressure: check the buffered amount until it drains. */
  congested: boolean;
  /** Live-event subscriptions by client topic (docs/protocol.md, Live events). */
  readonly subs: Subscriptions;
  /** Trace context of the upgrade request (its `traceparent`): the parent of this connection's spans; root when none. */
  readonly trace: Context;
}

/** A WebSocket carrying a Connection. */
export type Socket = WebSocket<Connection>;

/** Send a reply unless the socket closed meanwhile; a dropped send is counted (the client retries by id). */
export function send(ctx: GatewayContext, ws: Socket, c: Connection, frame: string | Uint8Array, isBinary: boolean): void {
  if (c.closed) return;
  const status = ws.send(frame, isBinary);
  if (status !== 1) {
    c.congested = true;
    if (status === 2) ctx.metrics.backpressure.inc();
  }
}

/** Reply `{op:"error", id, code, message}` in the request's encoding. */
export function sendError(ctx: GatewayContext, ws: Socket, c: Connection, isBinary: boolean, id: RequestId, err: unknown): void {
  const e = toEdgeError(err, ctx.logger);
  ctx.metrics.errors.inc(e.code);
  send(ctx, ws, c, encodeFrame({ op: 'error', id, code: e.code, message: e.message }, isBinary), isBinary);
}

/**
 * Run `task` after the connection's pending start/end, in arrival order, and
 * count it as in flight for graceful shutdown. Replies after an await are corked.
 */
export function afterBarrier(ctx: GatewayContext, c: Connection, task: () => void | Promise<void>, isBarrier: boolean): void {
  ctx.inflight.enter();
  const run = (c.barrier ?? Promise.resolve()).then(() => inContext(c.trace, task)).catch((err: unknown) => ctx.logger.error('ws task failed', { err }));
  const p = run.finally(() => {
    ctx.inflight.leave();
    if (c.barrier === p) c.barrier = null;
  });
  if (isBarrier || c.barrier !== null) c.barrier = p;
}

/** Fresh state for an authenticated upgrade. */
export function newConnection(tenantId: string, trace: Context = ROOT_CONTEXT): Connection {
  return { tenantId, scope: null, sessionId: null, generation: 0, ended: null, seq: 0, binary: false, closed: false, barrier: null, congested: false, subs: new Map(), trace };
}
