import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { MemgateError, badRequest, sessionConflict } from '../core/errors.ts';
import type { Scope } from '../core/types.ts';
import type { SessionRecord } from '../ports/turn-buffer.ts';
import type { GatewayContext } from './context.ts';
import { checkScopeId, parseSearchBody, parseStart, parseTurn } from './frames.ts';
import { encodeContextReply } from './codec.ts';
import { RawJson, authorize, beginCall, pathParams, readJson, reply, replyError, replyJson } from './http-io.ts';
import { METRICS_CONTENT_TYPE } from './metrics.ts';
import { handleVapi } from './vapi-route.ts';
import { serveDashboard } from './dashboard-assets.ts';
import { estimateTokens } from '../core/tokens.ts';
import type { AckReply } from '../service/api.ts';
import { inContext, requestContext } from './trace-context.ts';

/** What a route handler gets: the caller's tenant, decoded path parameters, named query values, the JSON body. */
interface RouteInput {
  tenantId: string;
  params: string[];
  query: Record<string, string>;
  body: unknown;
}

interface RouteSpec {
  /** Number of `:param` segments in the pattern. */
  params: number;
  /** Read a JSON body. */
  body: boolean;
  query?: readonly string[];
  /** A header that may carry the API key instead of `Authorization` (webhook platforms that send a secret header). */
  keyHeader?: string;
}

type RouteFn = (input: RouteInput) => Promise<unknown>;

/**
 * Wrap an async JSON route: abort handler, drain check, auth, parameter and
 * body decoding, in-flight tracking, and one error mapping for every route.
 */
function jsonRoute(ctx: GatewayContext, spec: RouteSpec, fn: RouteFn): (res: HttpResponse, req: HttpRequest) => void {
  return (res, req) => {
    const call = beginCall(res);
    try {
      if (ctx.draining) throw new MemgateError('unavailable', 'server is shutting down');
      const tenantId = authorize(ctx, call, req, spec.keyHeader);
      if (tenantId === null) return;
      const params = pathParams(req, spec.params);
      const query: Record<string, string> = {};
      for (const k of spec.query ?? []) query[k] = req.getQuery(k) ?? '';
      // A `traceparent` header makes the route's spans children of the caller's (no-op without a propagator).
      const parent = requestContext(req);
      const body = spec.body ? readJson(call, req, ctx.limits.maxPayloadBytes) : Promise.resolve(undefined);
      ctx.inflight.enter();
      body
        .then(
          // The handler runs inside a promise so that a synchronous throw (a bad path id) is answered, never escapes.
          (b) =>
            Promise.resolve()
              .then(() => inContext(parent, () => fn({ tenantId, params, query, body: b })))
              .then(
                (out) => (out instanceof RawJson ? reply(ctx, call, 200, 'application/json', out.bytes) : replyJson(ctx, call, 200, out)),
                (err: unknown) => replyError(ctx, call, err),
              ),
          // The body was refused before it was read through: close the connection after the reply.
          (err: unknown) => replyError(ctx, call, err, true),
        )
        // Last line of defence: a fault while replying is logged, never an unhandled rejection that exits the process.
        .catch((err: unknown) => ctx.logger.error('http route failed while replying', { err }))
        .finally(() => ctx.inflight.leave());
    } catch (err) {
      replyError(ctx, call, err);
    }
  };
}

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('body must be a JSON object');
  return body as Record<string, unknown>;
}

function userScope(tenantId: string, params: string[]): Scope {
  return { tenantId, agentId: checkScopeId('agentId', params[0] ?? ''), userId: checkScopeId('userId', params[1] ?? '') };
}

/** The session of a path id within the caller's tenant (another tenant's session id is simply unknown). */
async function sessionOf(ctx: GatewayContext, tenantId: string, sessionId: string): Promise<SessionRecord> {
  checkScopeId('sessionId', sessionId);
  const session = await ctx.service.session(tenantId, sessionId);
  if (session === null) throw new MemgateError('not_found', `unknown session "${sessionId}"`);
  return session;
}

async function sessionScopeOf(ctx: GatewayContext, tenantId: string, sessionId: string): Promise<Scope> {
  return (await sessionOf(ctx, tenantId, sessionId)).scope;
}

/** An append body may name its agent and user (optional): a turn that names others than the session's owner is refused, never stored under the owner. */
function checkOwner(body: Record<string, unknown>, scope: Scope, sessionId: string): void {
  const { agentId, userId } = body;
  if ((agentId !== undefined && agentId !== scope.agentId) || (userId !== undefined && userId !== scope.userId)) throw sessionConflict(sessionId);
}

/**
 * A turn for an ended call: a stored turnId re-sent is answered as the duplicate it is (its original
 * seq); a new turn is refused, as on the WebSocket, until a start with the session id reopens the call.
 */
async function appendAfterEnd(ctx: GatewayContext, scope: Scope, sessionId: string, turnId: string | undefined): Promise<AckReply> {
  const stored = turnId === undefined ? null : await ctx.service.storedAck(scope, turnId);
  if (stored) return stored;
  throw new MemgateError('not_started', `session "${sessionId}" has ended; start it again (POST /v1/sessions with this sessionId) to reopen it, or start a new session`);
}

/** Register docs/protocol.md's HTTP routes (plus `/metrics`, session end and buffered turns) on the app. */
export function registerHttpRoutes(app: TemplatedApp, ctx: GatewayContext): void {
  const { service } = ctx;

  app.get('/healthz', (res) => {
    res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end('{"status":"ok"}');
  });

  app.get('/metrics', (res, req) => {
    const call = beginCall(res);
    if (authorize(ctx, call, req) === null) return;
    // Queue depth is a port read; a slow or broken bus must not fail the scrape.
    const depth = Promise.race([ctx.runtime.ports.bus.depth(), new Promise<null>((r) => setTimeout(r, 1000, null))]).catch(() => null);
    depth.then((d) => reply(ctx, call, 200, METRICS_CONTENT_TYPE, ctx.metrics.render(d, service.extractionBacklog())));
  });

  app.post(
    '/v1/sessions',
    jsonRoute(ctx, { params: 0, body: true }, async ({ tenantId, body }) => {
      const req = parseStart(objectBody(body));
      const scope = { tenantId, agentId: req.agentId, userId: req.userId };
      const started = await service.startSessionEncoded(scope, req.sessionId);
      // A WebSocket of this call that dropped on this gateway has nothing left to end.
      ctx.drops.cancel(tenantId, started.sessionId);
      return new RawJson(encodeContextReply(undefined, started.sessionId, started.context, started.tookMs, false, started.reopened));
    }),
  );

  app.post(
    '/v1/sessions/:sessionId/turns',
    jsonRoute(ctx, { params: 1, body: true }, async ({ tenantId, params, body }) => {
      const fields = objectBody(body);
      const input = parseTurn(fields, ctx.limits.maxTurnBytes);
      const sessionId = params[0]!;
      const session = await sessionOf(ctx, tenantId, sessionId);
      const { scope } = session;
      checkOwner(fields, scope, sessionId);
      // Events and the append histogram come from the observed service (observed-service.ts).
      return session.endedAt === null ? await service.appendTurn(scope, sessionId, input) : await appendAfterEnd(ctx, scope, sessionId, input.turnId);
    }),
  );

  app.post(
    '/v1/sessions/:sessionId/end',
    jsonRoute(ctx, { params: 1, body: false }, async ({ tenantId, params }) => {
      const sessionId = params[0]!;
      const scope = await sessionScopeOf(ctx, tenantId, sessionId);
      await service.endSession(scope, sessionId);
      return { sessionId, ended: true };
    }),
  );

  app.post(
    '/v1/search',
    jsonRoute(ctx, { params: 0, body: true }, async ({ tenantId, body }) => {
      const req = parseSearchBody(objectBody(body));
      return service.search({ tenantId, agentId: req.agentId, userId: req.userId }, req.query, { k: req.k, deadlineMs: req.deadlineMs, asOf: req.asOf });
    }),
  );

  app.post(
    '/v1/agents/:agentId/users/:userId/flush',
    jsonRoute(ctx, { params: 2, body: false }, ({ tenantId, params }) => service.flush(userScope(tenantId, params))),
  );

  app.get(
    '/v1/agents/:agentId/users/:userId/entities',
    jsonRoute(ctx, { params: 2, body: false, query: ['history'] }, async ({ tenantId, params, query }) => {
      const history = query['history'] === 'true' || query['history'] === '1';
      return { entities: await service.timeline(userScope(tenantId, params), history) };
    }),
  );

  app.get(
    '/v1/agents/:agentId/users/:userId/turns',
    jsonRoute(ctx, { params: 2, body: false }, async ({ tenantId, params }) => ({ turns: await service.bufferedTurns(userScope(tenantId, params)) })),
  );

  app.get(
    '/v1/agents/:agentId/users/:userId/quarantine',
    jsonRoute(ctx, { params: 2, body: false }, async ({ tenantId, params }) => ({ quarantined: await service.quarantined(userScope(tenantId, params)) })),
  );

  app.put(
    '/v1/agents/:agentId/schema',
    jsonRoute(ctx, { params: 1, body: true }, async ({ tenantId, params, body }) => {
      const agentId = checkScopeId('agentId', params[0] ?? '');
      return { agentId, schema: await service.putSchema(tenantId, agentId, body) };
    }),
  );

  app.del(
    '/v1/agents/:agentId/users/:userId',
    jsonRoute(ctx, { params: 2, body: false }, async ({ tenantId, params }) => {
      const scope = userScope(tenantId, params);
      await service.forget(scope);
      return { agentId: scope.agentId, userId: scope.userId, forgotten: true };
    }),
  );

  app.post(
    '/v1/integrations/vapi',
    jsonRoute(ctx, { params: 0, body: true, query: ['agentId', 'assistantId'], keyHeader: 'x-vapi-secret' }, ({ tenantId, query, body }) => handleVapi(service, tenantId, query, body)),
  );

  // --- Dashboard reads (docs/protocol.md "Dashboard routes"): tenant-scoped, read-only, off the call path.

  app.get(
    '/v1/calls',
    jsonRoute(ctx, { params: 0, body: false }, async ({ tenantId }) => ctx.live.calls(tenantId)),
  );

  app.get(
    '/v1/extraction',
    jsonRoute(ctx, { params: 0, body: false, query: ['minutes'] }, async ({ tenantId, query }) => {
      const minutes = query['minutes'] ? Number(query['minutes']) : 10;
      if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 24 * 60) throw badRequest('minutes must be a number from 1 to 1440');
      return { ...(ctx.live.extraction(tenantId, minutes * 60_000) as object), backlog: service.extractionBacklog(tenantId) };
    }),
  );

  const startedAt = Date.now();
  app.get(
    '/v1/health',
    jsonRoute(ctx, { params: 0, body: false }, async ({ tenantId }) => {
      const { config } = ctx.runtime;
      const timeout = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<null>((r) => setTimeout(r, ms, null))]).catch(() => null);
      const [depth, servers] = await Promise.all([timeout(ctx.runtime.ports.bus.depth(), 1000), ctx.runtime.reachability ? timeout(ctx.runtime.reachability(), 1500) : Promise.resolve([])]);
      const mem = process.memoryUsage();
      return {
        status: ctx.draining ? 'draining' : 'ok',
        tenantId,
        profile: config.profile,
        adapters: config.adapters,
        servers: servers ?? [],
        extractionQueueReachable: depth !== null,
        uptimeS: Math.round((Date.now() - startedAt) / 1000),
        processUptimeS: Math.round(process.uptime()),
        memory: { rssBytes: mem.rss, heapUsedBytes: mem.heapUsed, heapTotalBytes: mem.heapTotal, externalBytes: mem.external },
        connections: ctx.metrics.connections,
        node: process.version,
        pid: process.pid,
      };
    }),
  );

  app.get(
    '/v1/sessions/:sessionId/turns',
    jsonRoute(ctx, { params: 1, body: false, query: ['afterSeq', 'limit'] }, async ({ tenantId, params, query }) => {
      const sessionId = params[0]!;
      const afterSeq = query['afterSeq'] ? Number(query['afterSeq']) : 0;
      const limit = query['limit'] ? Number(query['limit']) : 500;
      if (!Number.isInteger(afterSeq) || afterSeq < 0) throw badRequest('afterSeq must be a non-negative integer');
      if (!Number.isInteger(limit) || limit < 1 || limit > 5000) throw badRequest('limit must be an integer from 1 to 5000');
      const scope = await sessionScopeOf(ctx, tenantId, sessionId);
      const turns = (await service.bufferedTurns(scope)).filter((t) => t.sessionId === sessionId && t.seq > afterSeq).slice(0, limit);
      return { sessionId, agentId: scope.agentId, userId: scope.userId, turns };
    }),
  );

  app.get(
    '/v1/agents/:agentId/users/:userId/context',
    jsonRoute(ctx, { params: 2, body: false }, async ({ tenantId, params }) => {
      const context = await service.readContext(userScope(tenantId, params));
      return { ...context, contextTokens: estimateTokens(context.contextBlock) };
    }),
  );

  const dashboard = (res: HttpResponse, req: HttpRequest) => {
    const url = req.getUrl();
    if (!serveDashboard(ctx, res, url)) replyError(ctx, beginCall(res), new MemgateError('not_found', `no dashboard file ${url}`));
  };
  app.get('/dashboard', dashboard);
  app.get('/dashboard/*', dashboard);

  app.any('/*', (res, req) => {
    const call = beginCall(res);
    replyError(ctx, call, new MemgateError('not_found', `no route for ${req.getMethod().toUpperCase()} ${req.getUrl()}`));
  });
}
