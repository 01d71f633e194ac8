import uWS, { type HttpRequest, type HttpResponse, type WebSocketBehavior, type us_socket_context_t } from 'uWebSockets.js';
import { MemgateError, badRequest } from '../core/errors.ts';
import { bearerToken } from './auth.ts';
import { decodeFrame, encodeFrame, type Frame } from './codec.ts';
import type { GatewayContext } from './context.ts';
import { readId } from './frames.ts';
import { newConnection, send, sendError, type Connection, type Socket } from './ws-connection.ts';
import { handleAppend, handleEnd, handleSearch, handleStart, handleSubscribe, handleUnsubscribe } from './ws-ops.ts';

/** The `/v1/ws` behaviour: auth at upgrade, then one frame → one reply. */
export function wsBehavior(ctx: GatewayContext, sockets: Set<Socket>): WebSocketBehavior<Connection> {
  const { limits, metrics } = ctx;
  return {
    compression: uWS.DISABLED,
    maxPayloadLength: limits.maxPayloadBytes,
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
    },
    close: (ws, code) => {
      const c = ws.getUserData();
      c.closed = true;
      ctx.logger.debug('ws closed', { tenantId: c.tenantId, code, sessionId: c.sessionId });
      sockets.delete(ws);
      metrics.connections--;
      if (c.scope) metrics.activeCalls--;
      if (c.subscribed) ctx.relay.removeSubscriber(c.tenantId);
    },
  };
}

function upgrade(ctx: GatewayContext, res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
  const json = (status: string, code: string, message: string) =>
    res.writeStatus(status).writeHeader('content-type', 'application/json').end(JSON.stringify({ error: { code, message } }));
  if (ctx.draining) return void json('503 Service Unavailable', 'unavailable', 'server is shutting down');
  const key = bearerToken(req.getHeader('authorization')) ?? (req.getQuery('token') || null);
  const tenantId = ctx.auth.tenantOf(key);
  if (tenantId === null) {
    ctx.metrics.errors.inc('unauthorized');
    return void json('401 Unauthorized', 'unauthorized', 'a valid API key is required (Authorization: Bearer KEY or ?token=KEY)');
  }
  res.upgrade(newConnection(tenantId), req.getHeader('sec-websocket-key'), req.getHeader('sec-websocket-protocol'), req.getHeader('sec-websocket-extensions'), context);
}

function onMessage(ctx: GatewayContext, ws: Socket, message: ArrayBuffer, isBinary: boolean): void {
  const c = ws.getUserData();
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
  const op = frame['op'];
  if (op === 'ping') return send(ctx, ws, c, encodeFrame({ op: 'pong', id }, isBinary), isBinary);
  if (ctx.draining) return sendError(ctx, ws, c, isBinary, id, new MemgateError('unavailable', 'server is shutting down; reconnect'));
  if (c.congested && ws.getBufferedAmount() > ctx.limits.maxBackpressureBytes) {
    // The client is not reading its replies: refuse work instead of buffering without bound.
    ctx.metrics.backpressure.inc();
    return sendError(ctx, ws, c, isBinary, id, new MemgateError('rate_limited', 'too many unread replies; read them before sending more'));
  }
  switch (op) {
    case 'append':
      return handleAppend(ctx, ws, c, frame, id, isBinary, message);
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
