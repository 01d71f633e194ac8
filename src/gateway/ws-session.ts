import uWS, { type HttpRequest, type HttpResponse, type WebSocketBehavior, type us_socket_context_t } from 'uWebSockets.js';
import { MemgateError, badRequest } from '../core/errors.ts';
import { bearerToken } from './auth.ts';
import { assertValidStrings, decodeFrame, encodeFrame, type Frame } from './codec.ts';
import type { GatewayContext } from './context.ts';
import { readId, type RequestId } from './frames.ts';
import { newConnection, send, sendError, type Connection, type Socket } from './ws-connection.ts';
import { requestContext } from './trace-context.ts';
import { handleAppend, handleEnd, handleSearch, handleStart, handleSubscribe, handleUnsubscribe } from './ws-ops.ts';

/** The `/v1/ws` behaviour: auth at upgrade, then one frame → one reply. */
export function wsBehavior(ctx: GatewayContext, sockets: Set<Socket>): WebSocketBehavior<Connection> {
  const { limits, metrics } = ctx;
  return {
    compression: uWS.DISABLED,
    // uWS drops a frame over its limit with a bare TCP close (1006). Frames up to the
    // ceiling are read and refused with 1009, as the contract says; only frames over
    // the ceiling meet uWS's own limit.
    maxPayloadLength: oversizeCeiling(limits.maxPayloadBytes),
    // uWS drops sends past this. New requests are refused (rate_limited) from half of it on,
    // which leaves room for the replies of requests already accepted.
    maxBackpressure: limits.maxBackpressureBytes * 2,
    closeOnBackpressureLimit: 0,
    idleTimeout: limits.idleTimeoutS,
    sendPingsAutomatically: true,
    upgrade: (res: HttpResponse, req: HttpRequest, context: us_socket_context_t) => {
      try {
        upgrade(ctx, res, req, context);
      } catch (err) {
        ctx.logger.error('ws upgrade failed', { err });
        res.writeStatus('500 Internal Server Error').end();
      }
    },
    open: (ws) => {
      sockets.add(ws);
      metrics.connections++;
    },
    message: (ws, message, isBinary) => {
      try {
        onMessage(ctx, ws, message, isBinary);
      } catch (err) {
        // Never let one frame's bug escape into uWS (it would take every connection down).
        ctx.logger.error('ws message handler failed', { err });
      }
    },
    drain: (ws) => {
      const c = ws.getUserData();
      if (ws.getBufferedAmount() < limits.maxBackpressureBytes / 2) c.congested = false;
      if (c.subs.size > 0) ctx.relay.drained(c.subs);
    },
    close: (ws, code) => {
      const c = ws.getUserData();
      c.closed = true;
      ctx.logger.debug('ws closed', { tenantId: c.tenantId, code, sessionId: c.sessionId });
      sockets.delete(ws);
      metrics.connections--;
      if (c.scope) metrics.activeCalls--;
      // Closed without `end`: the call ends after the grace unless the client reconnects and starts it again.
      if (c.scope && c.sessionId) ctx.drops.schedule(c.scope, c.sessionId, c.generation, c.seq);
      if (c.subs.size > 0) ctx.relay.removeAll(c.subs);
    },
  };
}

function upgrade(ctx: GatewayContext, res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
  const json = (status: string, code: string, message: string) =>
    res
      .writeStatus(status)
      .writeHeader('content-type', 'application/json')
      .end(JSON.stringify({ error: { code, message } }));
  if (ctx.draining) return void json('503 Service Unavailable', 'unavailable', 'server is shutting down');
  // RFC 6455 §4.4: a version we do not speak gets 426 and the version we do.
  if (req.getHeader('sec-websocket-version') !== '13') {
    ctx.metrics.errors.inc('bad_request');
    return void res
      .writeStatus('426 Upgrade Required')
      .writeHeader('sec-websocket-version', '13')
      .writeHeader('content-type', 'application/json')
      .end(JSON.stringify({ error: { code: 'bad_request', message: 'unsupported Sec-WebSocket-Version; this server speaks 13' } }));
  }
  const key = bearerToken(req.getHeader('authorization')) ?? (req.getQuery('token') || null);
  const tenantId = ctx.auth.tenantOf(key);
  if (tenantId === null) {
    ctx.metrics.errors.inc('unauthorized');
    return void json('401 Unauthorized', 'unauthorized', 'a valid API key is required (Authorization: Bearer KEY or ?token=KEY)');
  }
  // The upgrade's `traceparent` is the parent of every span of this connection's call.
  res.upgrade(newConnection(tenantId, requestContext(req)), req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), context);
}

/** The largest frame uWS reads in order to refuse it with 1009: 8× the limit, at least 1 MiB, at most 16 MiB. */
export function oversizeCeiling(maxPayloadBytes: number): number {
  return Math.min(16 * 1024 * 1024, Math.max(maxPayloadBytes * 8, 1024 * 1024, maxPayloadBytes + 1));
}

function onMessage(ctx: GatewayContext, ws: Socket, message: ArrayBuffer, isBinary: boolean): void {
  const c = ws.getUserData();
  if (message.byteLength > ctx.limits.maxPayloadBytes) {
    ctx.metrics.errors.inc('too_large');
    return ws.end(1009, `frame exceeds ${ctx.limits.maxPayloadBytes} bytes`);
  }
  let frame: Frame;
  try {
    frame = decodeFrame(message, isBinary);
  } catch (err) {
    sendError(ctx, ws, c, isBinary, null, err);
    return;
  }
  c.binary = isBinary;
  const id = readId(frame);
  if (id === undefined) return sendError(ctx, ws, c, isBinary, null, badRequest('id must be a string or a number'));
  try {
    // Reads the frame's bytes (MessagePack UTF-8 check): must run before this callback returns.
    assertValidStrings(frame, isBinary ? message : undefined);
  } catch (err) {
    return sendError(ctx, ws, c, isBinary, id, err);
  }
  const op = frame['op'];
  if (op === 'ping') return send(ctx, ws, c, encodeFrame({ op: 'pong', id }, isBinary), isBinary);
  if (ctx.draining) return sendError(ctx, ws, c, isBinary, id, new MemgateError('unavailable', 'server is shutting down; reconnect'));
  if (c.congested && ws.getBufferedAmount() > ctx.limits.maxBackpressureBytes) {
    // The client is not reading its replies: refuse work instead of buffering without bound.
    ctx.metrics.backpressure.inc();
    return sendError(ctx, ws, c, isBinary, id, new MemgateError('rate_limited', 'too many unread replies; read them before sending more'));
  }
  try {
    dispatch(ctx, ws, c, frame, op, id, isBinary);
  } catch (err) {
    // The op's own handling missed this: answer it `internal` (logged once by sendError), keep the connection.
    sendError(ctx, ws, c, isBinary, id, err);
  }
}

function dispatch(ctx: GatewayContext, ws: Socket, c: Connection, frame: Frame, op: unknown, id: RequestId, isBinary: boolean): void {
  switch (op) {
    case 'append':
      return handleAppend(ctx, ws, c, frame, id, isBinary);
    case 'start':
      return handleStart(ctx, ws, c, frame, id, isBinary);
    case 'search':
      return handleSearch(ctx, ws, c, frame, id, isBinary);
    case 'end':
      return handleEnd(ctx, ws, c, id, isBinary);
    case 'subscribe':
      return handleSubscribe(ctx, ws, c, frame, id, isBinary);
    case 'unsubscribe':
      return handleUnsubscribe(ctx, ws, c, frame, id, isBinary);
    default: {
      const what = typeof op === 'string' ? `unknown op "${op.slice(0, 32)}"` : 'op must be a string';
      return sendError(ctx, ws, c, isBinary, id, badRequest(what));
    }
  }
}
