/**
 * The one place that turns Qdrant client failures into MemgateErrors. Retryable: timeouts,
 * connection failures, 408/409/429 and 5xx. Any other 4xx means our request or the collection's
 * configuration is wrong (wrong vector size, missing index): a redelivery would only repeat it.
 */
import { QdrantClientResourceExhaustedError, QdrantClientTimeoutError, QdrantClientUnexpectedResponseError } from '@qdrant/js-client-rest';
import { MemgateError, toMemgateError } from '../../core/errors.ts';

const RETRYABLE_STATUS = new Set([408, 409, 429]);

/** HTTP status of a failed call: the client's fetcher throws errors carrying `status`. */
export function httpStatus(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const status = (err as { status?: unknown }).status;
  if (typeof status === 'number') return status;
  // QdrantClientUnexpectedResponseError keeps the status only in its message ("Unexpected Response: 404 (Not Found)").
  if (err instanceof QdrantClientUnexpectedResponseError) {
    const m = /Unexpected Response: (\d{3})/.exec(err.message);
    if (m?.[1] !== undefined) return Number(m[1]);
  }
  return undefined;
}

/** Classify anything a client call threw; `op` names the call for the message ("upsert"). */
export function classifyQdrantError(err: unknown, op: string): MemgateError {
  if (err instanceof MemgateError) return err;
  const what = `qdrant ${op}`;
  if (err instanceof QdrantClientTimeoutError) return new MemgateError('unavailable', `${what}: timed out`, { cause: err, retryable: true });
  if (err instanceof QdrantClientResourceExhaustedError) {
    return new MemgateError('rate_limited', `${what}: rate limited (retry after ${err.retry_after} s)`, { cause: err, retryable: true });
  }
  const status = httpStatus(err);
  if (status !== undefined) {
    if (status === 429) return new MemgateError('rate_limited', `${what}: HTTP 429`, { cause: err, retryable: true });
    if (RETRYABLE_STATUS.has(status) || status >= 500) {
      return new MemgateError('unavailable', `${what}: HTTP ${status} (${short(err)})`, { cause: err, retryable: true });
    }
    return new MemgateError('internal', `${what}: HTTP ${status} (${short(err)})`, { cause: err, retryable: false });
  }
  // undici's fetch rejects with a TypeError("fetch failed") whose cause is the socket error.
  if (err instanceof TypeError) return new MemgateError('unavailable', `${what}: connection failed (${short(err)})`, { cause: err, retryable: true });
  return toMemgateError(err);
}

function short(err: unknown): string {
  const e = err as { message?: unknown; cause?: { code?: unknown; message?: unknown }; data?: { status?: { error?: unknown } } };
  // An HTTP error's message is only the status text; Qdrant's reason is in the body.
  const reason = typeof e.data?.status?.error === 'string' ? `: ${e.data.status.error}` : '';
  // fetch's own message is only "fetch failed"; the socket error (ECONNREFUSED, …) is its cause.
  const cause = typeof e.cause?.code === 'string' ? e.cause.code : typeof e.cause?.message === 'string' ? e.cause.message : null;
  const code = cause === null ? '' : `: ${cause}`;
  const base = typeof e.message === 'string' ? e.message : String(err);
  const msg = (base + reason + code).replace(/\s+/g, ' ').trim();
  return msg.length > 200 ? `${msg.slice(0, 200)}…` : msg;
}
