import { createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { TemplatedApp } from 'uWebSockets.js';
import { MemgateError } from '../core/errors.ts';
import { serviceBackend } from '../mcp/service-backend.ts';
import { createMemgateMcpServer } from '../mcp/tools.ts';
import type { GatewayContext } from './context.ts';
import { statusLine } from './error-map.ts';
import { authorize, beginCall, readBody, replyError, type HttpCall } from './http-io.ts';
import { inContext, requestContext } from './trace-context.ts';

/** The `/mcp` endpoint once mounted: `close` ends open MCP exchanges (listen streams) at shutdown. */
export interface McpRoute {
  close(): Promise<void>;
}

/**
 * MCP over streamable HTTP at `/mcp` (docs/protocol.md "MCP"), stateless: the SDK's per-request
 * handler builds a server for each request, for the 2026-07-28 revision and the 2025 ones alike, so
 * any gateway instance answers any request. Auth, body limit, drain and error replies are the
 * other routes'; the tenant travels to the server factory as the request's `authInfo`.
 */
export function registerMcpRoute(app: TemplatedApp, ctx: GatewayContext): McpRoute {
  const handler: McpHttpHandler = createMcpHandler(({ authInfo }) => createMemgateMcpServer(serviceBackend(ctx.service, String(authInfo?.extra?.['tenantId'])), { logger: ctx.logger }), {
    maxRequestBodySize: ctx.limits.maxPayloadBytes,
    onerror: (err) => ctx.logger.debug('mcp request refused', { err }),
  });
  app.any('/mcp', (res, req) => {
    const call = beginCall(res);
    try {
      if (ctx.draining) throw new MemgateError('unavailable', 'server is shutting down');
      const tenantId = authorize(ctx, call, req);
      if (tenantId === null) return;
      // The HttpRequest is stack-allocated: copy what the handler needs before any await.
      const method = req.getMethod().toUpperCase();
      const headers = new Headers();
      req.forEach((k, v) => headers.append(k, v));
      const query = req.getQuery();
      const parent = requestContext(req);
      const url = `http://${headers.get('host') || 'localhost'}/mcp${query ? `?${query}` : ''}`;
      const body = method === 'POST' ? readBody(call, req, ctx.limits.maxPayloadBytes) : Promise.resolve(undefined);
      ctx.inflight.enter();
      let inflight = true;
      // A request is in flight until its response starts: an open listen stream must not hold up a drain (close ends those).
      const leave = () => {
        if (inflight) ctx.inflight.leave();
        inflight = false;
      };
      const abort = new AbortController();
      res.onAborted(() => {
        call.aborted = true;
        abort.abort();
      });
      body
        .then(
          async (bytes) => {
            const request = new Request(url, { method, headers, body: bytes, signal: abort.signal });
            const response = await inContext(parent, () => handler.fetch(request, { authInfo: { token: '', clientId: tenantId, scopes: [], extra: { tenantId } } }));
            leave();
            await pipeResponse(ctx, call, response, abort.signal);
          },
          (err: unknown) => replyError(ctx, call, err, true),
        )
        .catch((err: unknown) => {
          if (!call.done) return replyError(ctx, call, err);
          if (!call.aborted) ctx.logger.error('mcp route failed while replying', { err });
        })
        .finally(leave);
    } catch (err) {
      replyError(ctx, call, err);
    }
  });
  return { close: () => handler.close() };
}

/** Write a fetch Response to uWS: status and headers, then the body as it comes (an SSE stream stays open until it ends). */
async function pipeResponse(ctx: GatewayContext, call: HttpCall, response: Response, signal: AbortSignal): Promise<void> {
  if (call.aborted) return void (await response.body?.cancel());
  call.done = true;
  ctx.metrics.http.inc(String(response.status));
  const { res } = call;
  const head = () => {
    res.writeStatus(statusLine(response.status));
    response.headers.forEach((v, k) => {
      // uWS frames the body itself (content-length or chunked).
      if (k !== 'content-length' && k !== 'transfer-encoding') res.writeHeader(k, v);
    });
    if (response.status === 401) res.writeHeader('www-authenticate', 'Bearer');
  };
  if (!response.body) return void res.cork(() => (head(), res.end()));
  const reader = response.body.getReader();
  const stop = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', stop, { once: true });
  try {
    let first = true;
    for (;;) {
      const { done, value } = await reader.read();
      if (call.aborted) return;
      if (done) {
        res.cork(() => {
          if (first) head();
          res.end();
        });
        return;
      }
      res.cork(() => {
        if (first) head();
        res.write(value);
      });
      first = false;
    }
  } finally {
    signal.removeEventListener('abort', stop);
  }
}
