import { MemgateError, type ErrorCode } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';

/** The error codes docs/protocol.md lets a WebSocket reply carry. */
export type WireErrorCode = 'bad_request' | 'unauthorized' | 'forbidden' | 'not_started' | 'too_large' | 'rate_limited' | 'unavailable' | 'internal';

/** An error as the edge reports it: a protocol code, a client-safe message and the HTTP status. */
export interface EdgeError {
  code: ErrorCode;
  message: string;
  status: number;
}

const STATUS_LINE: Record<number, string> = {
  200: '200 OK',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  413: '413 Payload Too Large',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
};

/** The HTTP status line for a status code uWS's writeStatus needs. */
export function statusLine(status: number): string {
  return STATUS_LINE[status] ?? `${status} Error`;
}

/**
 * Classify anything thrown at the edge, once. Unexpected errors are logged and
 * answered `internal` without their message (it may name tables or hosts);
 * `conflict` (an optimistic-concurrency retry that gave up) becomes `unavailable`.
 */
export function toEdgeError(err: unknown, logger: Logger): EdgeError {
  if (err instanceof MemgateError) {
    if (err.code === 'conflict') return { code: 'unavailable', message: err.message, status: 503 };
    if (err.code === 'internal') logger.error('internal error', { err });
    return { code: err.code, message: err.message, status: err.httpStatus };
  }
  logger.error('unexpected error', { err });
  return { code: 'internal', message: 'internal error', status: 500 };
}

/** Map an edge error to a code the WebSocket contract knows (`not_found` is reported as `bad_request`). */
export function wireCode(code: ErrorCode): WireErrorCode {
  if (code === 'not_found') return 'bad_request';
  if (code === 'conflict') return 'unavailable';
  return code;
}
