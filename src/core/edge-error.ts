import { MemgateError, type ErrorCode } from './errors.ts';
import type { Logger } from './logger.ts';

/** An error as the edge reports it: a protocol code, a client-safe message and the HTTP status. */
export interface EdgeError {
  code: ErrorCode;
  message: string;
  status: number;
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
