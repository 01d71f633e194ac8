import uWS, { type us_listen_socket } from 'uWebSockets.js';
import { MemgateError } from '../core/errors.ts';
import { createAuthenticator } from './auth.ts';
import type { GatewayContext, GatewayRuntime } from './context.ts';
import { CallSweeper } from './call-sweeper.ts';
import { DroppedCalls } from './dropped-calls.ts';
import { newId } from '../core/ids.ts';
import { observeCalls } from './observed-service.ts';
import { EventOutbox, EventRelay } from './events.ts';
import { registerHttpRoutes } from './http-routes.ts';
import { registerMcpRoute } from './mcp-route.ts';
import { LiveState } from './live-state.ts';
import { startHealthListener, type HealthListener } from './health-listener.ts';
import { GatewayMetrics } from './metrics.ts';
import { InFlight } from './shutdown.ts';
import type { Socket } from './ws-connection.ts';
import { wsBehavior } from './ws-session.ts';

/** uWS ListenOptions.LIBUS_LISTEN_EXCLUSIVE_PORT (the typings declare the enum; the addon takes the number). */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/**
 * Listen without SO_REUSEPORT. uWS shares a port by default, so a second
 * memgate (perhaps in open dev mode) would silently answer half the requests.
 */
function listenExclusive(app: uWS.TemplatedApp, host: string, port: number): Promise<us_listen_socket> {
  return new Promise((resolve, reject) => {
    // The typings lack the (host, port, options, cb) overload the addon accepts.
    const listen = app.listen as unknown as (h: string, p: number, o: number, cb: (ls: us_listen_socket | false) => void) => void;
    listen.call(app, host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, (ls) =>
      ls
        ? resolve(ls)
        : reject(
            new MemgateError('unavailable', `cannot listen on ${host}:${port}: the port is in use or the address is not available; choose another with --port N or MEMGATE_PORT (0 picks a free port)`),
          ),
    );
  });
}

/** A listening gateway. `close` is graceful: stop accepting, finish in-flight requests, close connections. */
export interface Gateway {
  readonly host: string;
  /** The bound port (the real one when configured as 0). */
  readonly port: number;
  /** The health-check port (`server.healthPort`), null when not configured. */
  readonly healthPort: number | null;
  readonly metrics: GatewayMetrics;
  close(options?: { drainTimeoutMs?: number }): Promise<void>;
}

/**
 * Put the memory engine behind uWebSockets.js: `/v1/ws`, the HTTP routes,
 * `/healthz`, `/metrics` and live events. The runtime stays the caller's to close.
 */
export async function startGateway(runtime: GatewayRuntime): Promise<Gateway> {
  // The package silently falls back to a slow `ws` shim when its native addon cannot load.
  if (typeof uWS.SSLApp !== 'function') throw new MemgateError('internal', 'uWebSockets.js native addon did not load (running on the fallback shim)');
  const { config } = runtime;
  const logger = runtime.logger.child({ component: 'gateway' });
  const app = uWS.App();
  const metrics = new GatewayMetrics();
  const auth = createAuthenticator(config.auth.keys);
  const outbox = new EventOutbox(runtime.ports.events, logger);
  // Every edge calls the service through this wrapper: events and histograms are raised there, once.
  const service = observeCalls(runtime.service, metrics, outbox);
  // With a shared store, this gateway names itself on the calls it holds and sweeps for calls nobody will end.
  const store = runtime.ports.buffer ?? null;
  const sweeper =
    store &&
    new CallSweeper(store, service, logger, newId('gw_'), {
      leaseMs: config.server.callLeaseMs,
      graceMs: config.server.dropGraceMs,
      intervalMs: config.server.sweepIntervalMs,
    });
  const ctx: GatewayContext = {
    runtime,
    service,
    logger,
    metrics,
    inflight: new InFlight(),
    outbox,
    drops: new DroppedCalls(service, logger, config.server.dropGraceMs, store),
    holder: sweeper?.holder ?? null,
    relay: new EventRelay(runtime.ports.events, metrics, logger, Math.max(16 * 1024, Math.floor(config.server.maxBackpressureBytes / 4))),
    live: new LiveState(config.worker.maxDeliver),
    auth,
    limits: {
      maxTurnBytes: config.server.maxTurnBytes,
      maxPayloadBytes: config.server.maxPayloadBytes,
      maxBackpressureBytes: config.server.maxBackpressureBytes,
      // uWS refuses idle timeouts between 1 and 7 s (its timer granularity is 4 s).
      idleTimeoutS: config.server.idleTimeoutS === 0 ? 0 : Math.max(8, config.server.idleTimeoutS),
    },
    draining: false,
  };
  ctx.relay.onEvent((e) => ctx.live.onEvent(e));
  const sockets = new Set<Socket>();
  app.ws('/v1/ws', wsBehavior(ctx, sockets));
  const mcp = registerMcpRoute(app, ctx);
  registerHttpRoutes(app, ctx);
  ctx.relay.start();
  // The lease is taken before any call can be held; the first sweep ends what gateways gone before left open.
  await sweeper?.start();

  const { host } = config.server;
  let listenSocket: us_listen_socket;
  try {
    listenSocket = await listenExclusive(app, host, config.server.port);
  } catch (err) {
    await sweeper?.stop();
    ctx.relay.stop();
    throw err;
  }
  const port = uWS.us_socket_local_port(listenSocket);
  let health: HealthListener | null = null;
  if (config.server.healthPort !== undefined) {
    try {
      health = await startHealthListener(host, config.server.healthPort, () => ctx.draining);
    } catch (err) {
      uWS.us_listen_socket_close(listenSocket);
      await sweeper?.stop();
      ctx.relay.stop();
      throw err;
    }
    logger.info('health checks listening', { host, port: health.port });
  }
  if (auth.open) logger.warn('open dev mode: no API keys configured, every request is tenant "default"');
  logger.info('listening', { host, port, auth: auth.open ? 'open' : 'keys', tenants: new Set(config.auth.keys.map((k) => k.tenantId)).size, holder: ctx.holder });

  let closing: Promise<void> | null = null;
  const close = async (drainTimeoutMs: number): Promise<void> => {
    ctx.draining = true;
    uWS.us_listen_socket_close(listenSocket);
    const drained = await ctx.inflight.idle(drainTimeoutMs);
    if (!drained) logger.warn('shutdown: requests still in flight after the drain timeout', { inflight: ctx.inflight.count });
    // Open MCP listen streams never end by themselves.
    await mcp.close().catch((err: unknown) => logger.warn('shutdown: closing MCP exchanges failed', { err }));
    for (const ws of [...sockets]) ws.end(1001, 'server shutting down');
    // Let the close frames go out, then drop idle keep-alive HTTP connections (app.close is untyped in v20.30).
    await new Promise((r) => setTimeout(r, 50));
    (app as unknown as { close?: () => void }).close?.();
    // The calls just closed (and any still in their grace) end now rather than never (see DroppedCalls.settle).
    await ctx.drops.settle();
    await sweeper?.stop();
    ctx.relay.stop();
    ctx.outbox.flush();
    // Last: a load balancer saw 503 draining on it while requests finished.
    await health?.close();
    logger.info('gateway closed');
  };
  return {
    host,
    port,
    healthPort: health?.port ?? null,
    metrics,
    close: (options = {}) => (closing ??= close(options.drainTimeoutMs ?? 10_000)),
  };
}
