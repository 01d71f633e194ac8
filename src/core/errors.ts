/** Stable error codes shared by the wire protocol (docs/protocol.md) and the domain. */
export const ERROR_CODES = {
  bad_request: { http: 400, retryable: false },
  unauthorized: { http: 401, retryable: false },
  forbidden: { http: 403, retryable: false },
  not_found: { http: 404, retryable: false },
  not_started: { http: 400, retryable: false },
  too_large: { http: 413, retryable: false },
  rate_limited: { http: 429, retryable: true },
  unavailable: { http: 503, retryable: true },
  /** A session id held by another agent or user (409); retryable only when raised by an optimistic-concurrency retry that gave up. */
  conflict: { http: 409, retryable: true },
  internal: { http: 500, retryable: false },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The one error type memgate throws on purpose: a stable code, retryability and the cause kept. */
export class MemgateError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MemgateError';
    this.code = code;
    this.retryable = options.retryable ?? ERROR_CODES[code].retryable;
  }

  /** HTTP status matching the code (docs/protocol.md: 400, 401, 403, 404, 413, 429, 503, 500). */
  get httpStatus(): number {
    return ERROR_CODES[this.code].http;
  }
}

/** Classifies anything thrown into a MemgateError once, at a boundary. */
export function toMemgateError(err: unknown): MemgateError {
  if (err instanceof MemgateError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new MemgateError('internal', message, { cause: err, retryable: true });
}

/** Shorthand for a client-side validation failure. */
export function badRequest(message: string): MemgateError {
  return new MemgateError('bad_request', message);
}

/** A session id that belongs to another agent or user of the tenant: never retried, never stored under them. */
export function sessionConflict(sessionId: string): MemgateError {
  return new MemgateError('conflict', `session "${sessionId}" belongs to another agent or user; use a new sessionId`, { retryable: false });
}
