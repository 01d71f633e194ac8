/**
 * The one place that turns openai SDK failures into MemgateErrors. Retryable: timeouts,
 * connection errors, 408, 409, 429, 5xx and status-less API errors; any other 4xx is a
 * configuration or request bug that a redelivery would only repeat.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { MemgateError, toMemgateError } from '../../core/errors.ts';
import { socketErrorReason } from '../../core/socket-errors.ts';

const RETRYABLE_STATUS = new Set([408, 409, 429]);
const MAX_IN_PLACE_DELAY_MS = 2_000;
const DEFAULT_IN_PLACE_DELAY_MS = 200;

/**
 * Classify anything an SDK call threw; `op` names the call for the message ("chat completion"),
 * `endpoint` the service and its base URL ("LLM at http://127.0.0.1:11434/v1"), so an operator
 * reading a failed flush knows which host to look at (never the key).
 */
export function classifyOpenAiError(err: unknown, op: string, endpoint = 'endpoint'): MemgateError {
  if (err instanceof MemgateError) return err;
  // Order matters: the timeout error is a subclass of the connection error, which is an APIError.
  if (err instanceof APIConnectionTimeoutError) {
    return new MemgateError('unavailable', `${endpoint} timed out (${op})`, { cause: err, retryable: true });
  }
  if (err instanceof APIUserAbortError) {
    return new MemgateError('unavailable', `${op}: request aborted`, { cause: err, retryable: true });
  }
  if (err instanceof APIConnectionError) {
    return new MemgateError('unavailable', `${endpoint} unreachable: ${socketErrorReason(err, short(err))} (${op})`, { cause: err, retryable: true });
  }
  if (err instanceof APIError) {
    const status = err.status;
    if (status === undefined) return new MemgateError('unavailable', `${op}: ${short(err)}`, { cause: err, retryable: true });
    if (status === 429) return new MemgateError('rate_limited', `${op}: HTTP 429 rate limited`, { cause: err, retryable: true });
    if (RETRYABLE_STATUS.has(status) || status >= 500) {
      return new MemgateError('unavailable', `${op}: HTTP ${status} (${short(err)})`, { cause: err, retryable: true });
    }
    // A 4xx means our request or the endpoint's configuration (key, model, json_schema support) is wrong.
    return new MemgateError('internal', `${op}: HTTP ${status} (${short(err)})`, { cause: err, retryable: false });
  }
  // The SDK parses the response body itself: a cut-off or non-JSON body surfaces as a bare SyntaxError.
  if (err instanceof SyntaxError) {
    return new MemgateError('unavailable', `${op}: the LLM endpoint answered with a body that is not JSON (${short(err)})`, { cause: err, retryable: true });
  }
  return toMemgateError(err);
}

/**
 * Delay before retrying `err` inside the adapter, or null when the adapter should not retry
 * it itself: non-retryable errors, and timeouts (a second wait of `timeoutMs` would double
 * the job's hold on the user lock; the worker's delayed redelivery handles them).
 */
export function inPlaceRetryDelayMs(err: unknown): number | null {
  if (err instanceof APIConnectionTimeoutError || err instanceof APIUserAbortError) return null;
  if (!classifyOpenAiError(err, '').retryable) return null;
  if (err instanceof APIError && err.headers) {
    const ms = Number(err.headers.get('retry-after-ms'));
    if (Number.isFinite(ms) && ms >= 0 && err.headers.has('retry-after-ms')) return Math.min(ms, MAX_IN_PLACE_DELAY_MS);
    const s = Number(err.headers.get('retry-after'));
    if (Number.isFinite(s) && s >= 0 && err.headers.has('retry-after')) return Math.min(s * 1000, MAX_IN_PLACE_DELAY_MS);
  }
  return DEFAULT_IN_PLACE_DELAY_MS;
}

/** The model answered, but not in the contract's shape: retryable, the window stays hot. */
export function invalidOutput(op: string, detail: string, cause?: unknown): MemgateError {
  return new MemgateError('unavailable', `${op}: invalid model output (${detail})`, { cause, retryable: true });
}

/** A short, single-line form of an SDK message (they can embed whole response bodies). */
function short(err: Error): string {
  const msg = err.message.replace(/\s+/g, ' ').trim();
  return msg.length > 200 ? `${msg.slice(0, 200)}…` : msg;
}
