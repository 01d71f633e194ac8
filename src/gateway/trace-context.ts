import { context, propagation, ROOT_CONTEXT, type Context, type TextMapGetter } from '@opentelemetry/api';
import type { HttpRequest } from 'uWebSockets.js';

/**
 * Trace context from a request's headers (W3C `traceparent`/`tracestate`, or whatever propagator
 * the host registered): an agent's trace continues into memgate's spans. With no propagator
 * registered (no SDK) `propagation.extract` is a no-op and this is the root context.
 */
const headers: TextMapGetter<HttpRequest> = {
  // uWS keys are lower-case, as propagators ask for them.
  get: (req, key) => req.getHeader(key) || undefined,
  keys: (req) => {
    const names: string[] = [];
    req.forEach((name) => names.push(name));
    return names;
  },
};

/** The parent context a request names (read synchronously: uWS's HttpRequest dies when the handler returns). */
export function requestContext(req: HttpRequest): Context {
  return propagation.extract(ROOT_CONTEXT, req, headers);
}

/** Run `fn` with `parent` active; with nothing propagated, just run it. */
export function inContext<T>(parent: Context, fn: () => T): T {
  return parent === ROOT_CONTEXT ? fn() : context.with(parent, fn);
}
