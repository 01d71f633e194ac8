import { MemgateError, type ErrorCode } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';

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
  409: '409 Conflict',
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
 * answered `internal` without their message (it may name tables or hosts).
 * A retryable `conflict` (an optimistic-concurrency retry inside the engine that gave
 * up) becomes `unavailable`: the client should simply retry. A non-retryable one (a
 * session id of another user) is the client's to fix: 409 `conflict`.
 */
export function toEdgeError(err: unknown, logger: Logger): EdgeError {
  if (err instanceof MemgateError) {
    if (err.code === 'conflict' && err.retryable) return { code: 'unavailable', message: err.message, status: 503 };
    if (err.code === 'internal') logger.error('internal error', { err });
    return { code: err.code, message: err.message, status: err.httpStatus };
  }
  logger.error('unexpected error', { err });
  return { code: 'internal', message: 'internal error', status: 500 };
}
