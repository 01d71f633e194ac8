import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { MemgateError } from '../core/errors.ts';
import type { Scope, TurnInput } from '../core/types.ts';
import type { AckReply } from '../service/api.ts';
import { encodeAck, encodeContextReply, encodeFrame, type Frame } from './codec.ts';
import type { GatewayContext } from './context.ts';
import { parseSearch, parseStart, parseTopics, parseTurn, type RequestId } from './frames.ts';
import { afterBarrier, send, sendError, type Connection, type Socket } from './ws-connection.ts';

/**
 * The WebSocket ops. `append` is the hot path: validate, durable write, ack,
 * all inside the uWS callback when the turn buffer is synchronous (embedded
 * SQLite); an async buffer adds exactly one continuation. Events go out after.
 */

const notStarted = () => new MemgateError('not_started', 'send start before append, search or end');
const callEnded = (sessionId: string) => new MemgateError('not_started', `session "${sessionId}" has ended; send start with this sessionId to reopen it, or start a new session`);

/** `{op:"append"}` → `{op:"ack", id, turnId, seq, duplicate}`. */
export function handleAppend(ctx: GatewayContext, ws: Socket, c: Connection, frame: Frame, id: RequestId, isBinary: boolean): void {
  let input: TurnInput;
  try {
    input = parseTurn(frame, ctx.limits.maxTurnBytes);
  } catch (err) {
    return sendError(ctx, ws, c, isBinary, id, err);
  }
  if (c.barrier !== null) return afterBarrier(ctx, c, () => appendNow(ctx, ws, c, input, id, isBinary, true), false);
  appendNow(ctx, ws, c, input, id, isBinary, false);
}

function appendNow(ctx: GatewayContext, ws: Socket, c: Connection, input: TurnInput, id: RequestId, isBinary: boolean, deferred: boolean): void | Promise<void> {
  const scope = c.scope;
  const sessionId = c.sessionId;
  if (scope === null || sessionId === null) {
    if (c.ended === null || input.turnId === undefined) return cork(ws, c, deferred, () => sendError(ctx, ws, c, isBinary, id, notStarted()));
    return appendAfterEnd(ctx, ws, c, c.ended, input.turnId, id, isBinary);
  }
  let result: AckReply | Promise<AckReply>;
  try {
    // Under the upgrade's trace context when it named one; otherwise a plain call (the hot path).
    result = c.trace === ROOT_CONTEXT ? ctx.service.appendTurn(scope, sessionId, input) : context.with(c.trace, ctx.service.appendTurn, undefined, scope, sessionId, input);
  } catch (err) {
    return cork(ws, c, deferred, () => sendError(ctx, ws, c, isBinary, id, err));
  }
  if (!(result instanceof Promise)) {
    // Synchronous durable write: ack inside this callback (uWS corks message handlers).
    if (!deferred) return ack(ctx, ws, c, result, id, isBinary);
    return cork(ws, c, true, () => ack(ctx, ws, c, result, id, isBinary));
  }
  ctx.inflight.enter();
  return result
    .then(
      (reply) => {
        ctx.inflight.leave();
        cork(ws, c, true, () => ack(ctx, ws, c, reply, id, isBinary));
      },
      (err: unknown) => {
        ctx.inflight.leave();
        cork(ws, c, true, () => sendError(ctx, ws, c, isBinary, id, err));
      },
    )
    .catch((err: unknown) => ctx.logger.error('ws append reply failed', { err }));
}

/** A turn sent after this connection's `end`: a re-sent stored turn is acked as the duplicate it is; a new one is refused. */
function appendAfterEnd(ctx: GatewayContext, ws: Socket, c: Connection, call: { scope: Scope; sessionId: string }, turnId: string, id: RequestId, isBinary: boolean): Promise<void> {
  ctx.inflight.enter();
  return ctx.service
    .storedAck(call.scope, turnId)
    .then(
      (stored) => cork(ws, c, true, () => (stored ? ack(ctx, ws, c, stored, id, isBinary) : sendError(ctx, ws, c, isBinary, id, callEnded(call.sessionId)))),
      (err: unknown) => cork(ws, c, true, () => sendError(ctx, ws, c, isBinary, id, err)),
    )
    .catch((err: unknown) => ctx.logger.error('ws append reply failed', { err }))
    .finally(() => ctx.inflight.leave());
}

function ack(ctx: GatewayContext, ws: Socket, c: Connection, r: AckReply, id: RequestId, isBinary: boolean): void {
  let frame: string | Uint8Array;
  try {
    frame = encodeAck(id, r.turnId, r.seq, r.duplicate, isBinary);
  } catch (err) {
    // A reply that cannot be written is this request's fault to report, not the connection's.
    return sendError(ctx, ws, c, isBinary, id, err);
  }
  send(ctx, ws, c, frame, isBinary);
  // The event and the histogram were raised by the observed service (observed-service.ts), as for every edge.
  if (!r.duplicate) c.seq = r.seq;
}

/**
 * Run `fn`, which sends: a send `deferred` past an await is corked by hand
 * (inside a uWS callback it already is), and a closed socket is never touched.
 */
function cork(ws: Socket, c: Connection, deferred: boolean, fn: () => void): void {
  if (c.closed || !deferred) fn();
  else ws.cork(fn);
}

/** `{op:"start"}` → `{op:"context", ...}`. A barrier: requests sent right behind it wait for it. */
export function handleStart(ctx: GatewayContext, ws: Socket, c: Connection, frame: Frame, id: RequestId, isBinary: boolean): void {
  let req;
  try {
    req = parseStart(frame);
  } catch (err) {
    return sendError(ctx, ws, c, isBinary, id, err);
  }
  const scope = { tenantId: c.tenantId, agentId: req.agentId, userId: req.userId };
  afterBarrier(
    ctx,
    c,
    async () => {
      try {
        // Named as the call's holder: if this gateway dies, a sweep elsewhere ends the call (call-sweeper.ts).
        const started = await ctx.service.startSessionEncoded(scope, req.sessionId, ctx.holder === null ? {} : { holder: ctx.holder });
        ctx.drops.cancel(scope.tenantId, started.sessionId);
        // Another call left live on this connection is abandoned by it: it ends as a dropped call would.
        if (c.scope !== null && c.sessionId !== null && c.sessionId !== started.sessionId) ctx.drops.schedule(c.scope, c.sessionId, c.generation, c.seq);
        if (c.scope === null && !c.closed) ctx.metrics.activeCalls++;
        c.scope = scope;
        c.sessionId = started.sessionId;
        c.generation = started.generation;
        c.ended = null;
        c.seq = 0;
        // Closed while starting: the call was started for a socket that is gone, so it is a dropped call.
        if (c.closed) ctx.drops.schedule(scope, started.sessionId, started.generation, 0);
        const frame = encodeContextReply(id, started.sessionId, started.context, started.tookMs, isBinary, started.reopened);
        cork(ws, c, true, () => send(ctx, ws, c, frame, isBinary));
      } catch (err) {
        cork(ws, c, true, () => sendError(ctx, ws, c, isBinary, id, err));
      }
    },
    true,
  );
}

/** `{op:"search"}` → `{op:"results", id, results, tookMs}`. */
export function handleSearch(ctx: GatewayContext, ws: Socket, c: Connection, frame: Frame, id: RequestId, isBinary: boolean): void {
  let req;
  try {
    req = parseSearch(frame);
  } catch (err) {
    return sendError(ctx, ws, c, isBinary, id, err);
  }
  afterBarrier(
    ctx,
    c,
    async () => {
      try {
        if (c.scope === null) throw notStarted();
        const reply = await ctx.service.search(c.scope, req.query, { k: req.k, deadlineMs: req.deadlineMs, asOf: req.asOf });
        cork(ws, c, true, () => send(ctx, ws, c, encodeFrame({ op: 'results', id, ...reply }, isBinary), isBinary));
      } catch (err) {
        cork(ws, c, true, () => sendError(ctx, ws, c, isBinary, id, err));
      }
    },
    false,
  );
}

/** `{op:"end"}` → `{op:"ended", id}`: the call is over; appends need a new start. */
export function handleEnd(ctx: GatewayContext, ws: Socket, c: Connection, id: RequestId, isBinary: boolean): void {
  afterBarrier(
    ctx,
    c,
    async () => {
      try {
        const scope = c.scope;
        const sessionId = c.sessionId;
        if (scope === null || sessionId === null) throw notStarted();
        await ctx.service.endSession(scope, sessionId, { lastSeq: c.seq });
        if (c.scope !== null && !c.closed) ctx.metrics.activeCalls--;
        c.scope = null;
        c.sessionId = null;
        c.ended = { scope, sessionId };
        cork(ws, c, true, () => send(ctx, ws, c, encodeFrame({ op: 'ended', id }, isBinary), isBinary));
      } catch (err) {
        cork(ws, c, true, () => sendError(ctx, ws, c, isBinary, id, err));
      }
    },
    true,
  );
}

/** `{op:"subscribe", topics}` → `{op:"subscribed", id, topics}`; events arrive in this request's encoding, numbered per topic. */
export function handleSubscribe(ctx: GatewayContext, ws: Socket, c: Connection, frame: Frame, id: RequestId, isBinary: boolean): void {
  try {
    const topics = parseTopics(frame);
    ctx.relay.subscribe(ws, c.subs, c.tenantId, topics, isBinary);
    send(ctx, ws, c, encodeFrame({ op: 'subscribed', id, topics }, isBinary), isBinary);
  } catch (err) {
    sendError(ctx, ws, c, isBinary, id, err);
  }
}

/** `{op:"unsubscribe", topics}` → `{op:"unsubscribed", id, topics}`. */
export function handleUnsubscribe(ctx: GatewayContext, ws: Socket, c: Connection, frame: Frame, id: RequestId, isBinary: boolean): void {
  try {
    const topics = parseTopics(frame);
    ctx.relay.unsubscribeTopics(c.subs, c.tenantId, topics);
    send(ctx, ws, c, encodeFrame({ op: 'unsubscribed', id, topics }, isBinary), isBinary);
  } catch (err) {
    sendError(ctx, ws, c, isBinary, id, err);
  }
}
