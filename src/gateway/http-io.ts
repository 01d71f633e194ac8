import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { MemgateError, badRequest } from '../core/errors.ts';
import { bearerToken } from './auth.ts';
import type { GatewayContext } from './context.ts';
import { assertValidStrings } from './codec.ts';
import { toEdgeError } from '../core/edge-error.ts';
import { statusLine } from './error-map.ts';

/**
 * HTTP plumbing over uWS: an HttpResponse dies on abort, so every route
 * attaches onAborted first, reads request headers synchronously (the
 * HttpRequest is stack-allocated) and writes its reply corked.
 */

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** One HTTP exchange: whether the client went away and whether it was answered. */
export interface HttpCall {
  readonly res: HttpResponse;
  aborted: boolean;
  done: boolean;
}

/** Write a JSON reply unless the client aborted; `close` ends the TCP connection after it (oversized bodies). */
export function replyJson(ctx: GatewayContext, call: HttpCall, status: number, body: unknown, close = false): void {
  reply(ctx, call, status, 'application/json', JSON.stringify(body), close);
}

/** A route result that is already JSON bytes (the session-start reply): written as is. */
export class RawJson {
  constructor(readonly bytes: string | Uint8Array) {}
}

/** Write a reply of any content type, corked. */
export function reply(ctx: GatewayContext, call: HttpCall, status: number, contentType: string, body: string | Uint8Array, close = false): void {
  if (call.aborted || call.done) return;
  call.done = true;
  ctx.metrics.http.inc(String(status));
  call.res.cork(() => {
    call.res.writeStatus(statusLine(status)).writeHeader('content-type', contentType);
    if (status === 401) call.res.writeHeader('www-authenticate', 'Bearer');
    call.res.end(body, close);
  });
}

/** Reply `{error:{code, message}}` with the code's HTTP status; `close` when the body was left unread. */
export function replyError(ctx: GatewayContext, call: HttpCall, err: unknown, close = false): void {
  const e = toEdgeError(err, ctx.logger);
  replyJson(ctx, call, e.status, { error: { code: e.code, message: e.message } }, close);
}

/** Start an exchange: attach the abort handler before anything can await. */
export function beginCall(res: HttpResponse): HttpCall {
  const call: HttpCall = { res, aborted: false, done: false };
  res.onAborted(() => {
    call.aborted = true;
  });
  return call;
}

/** The caller's tenant from `Authorization: Bearer KEY`, or null after replying 401. Reads the header synchronously. */
export function authorize(ctx: GatewayContext, call: HttpCall, req: HttpRequest, keyHeader?: string): string | null {
  const tenantId = ctx.auth.tenantOf(bearerToken(req.getHeader('authorization')) ?? (keyHeader ? req.getHeader(keyHeader) || null : null));
  if (tenantId === null) replyError(ctx, call, new MemgateError('unauthorized', 'a valid API key is required (Authorization: Bearer KEY)'));
  return tenantId;
}

/** URL path parameters, percent-decoded (uWS hands them raw). */
export function pathParams(req: HttpRequest, count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    try {
      out.push(decodeURIComponent(req.getParameter(i)));
    } catch {
      throw badRequest('malformed percent-encoding in the URL');
    }
  }
  return out;
}

/**
 * How much of an oversize body is read and discarded before it is refused, as a multiple of the
 * limit. A client still sending when the connection closes often sees a reset instead of the
 * 413; reading the rest first lets it read the answer. Past this, the refusal is immediate.
 */
const DRAIN_FACTOR = 8;

/**
 * Read the whole body as bytes. Refuses more than `maxBytes` with `too_large` (413) once the
 * body has been read through (the rest discarded), or at once when the Content-Length or the
 * running total exceeds DRAIN_FACTOR times the limit. Must be called synchronously in the
 * route handler.
 */
export function readBody(call: HttpCall, req: HttpRequest, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(req.getHeader('content-length') || '0');
  const drainCap = maxBytes * DRAIN_FACTOR;
  return new Promise((resolve, reject) => {
    if (declared > drainCap) return reject(tooLarge(maxBytes));
    const chunks: Buffer[] = [];
    let total = 0;
    let over = declared > maxBytes;
    let failed = false;
    call.res.onData((chunk, isLast) => {
      if (failed) return;
      total += chunk.byteLength;
      if (total > maxBytes) over = true;
      if (over) {
        if (isLast || total > drainCap) {
          failed = true;
          reject(tooLarge(maxBytes));
        }
        return;
      }
      // uWS neuters the chunk when this callback returns: copy unless it is the whole body and is consumed now.
      if (!isLast) return void chunks.push(Buffer.from(new Uint8Array(chunk).slice()));
      const last = new Uint8Array(chunk);
      resolve(chunks.length === 0 ? last.slice() : Buffer.concat([...chunks, last]));
    });
  });
}

/** Read the whole body (as `readBody`) as strict UTF-8 JSON; undefined when empty. */
export function readJson(call: HttpCall, req: HttpRequest, maxBytes: number): Promise<unknown> {
  return readBody(call, req, maxBytes).then((body) => {
    if (body.length === 0) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(strictUtf8.decode(body));
    } catch {
      throw badRequest('body is not valid UTF-8 JSON');
    }
    assertValidStrings(value);
    return value;
  });
}

function tooLarge(maxBytes: number): MemgateError {
  return new MemgateError('too_large', `body exceeds ${maxBytes} bytes`);
}
