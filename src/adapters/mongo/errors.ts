/**
 * The one place that turns MongoDB driver failures into MemgateErrors. Network, server
 * selection, timeouts and errors the server labels retryable are `unavailable` (retryable);
 * anything else (bad index options, auth, validation) is a bug a redelivery would only repeat.
 */
import {
  MongoClientClosedError,
  MongoError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import { MemgateError, toMemgateError } from '../../core/errors.ts';

/** Server error code of a unique-index violation. */
export const DUPLICATE_KEY = 11000;

/** True for a duplicate-key error (a lost insert race on a deterministic `_id`). */
export function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === DUPLICATE_KEY;
}

/** Classify anything a driver call threw; `op` names the call for the message ("commitHot"). */
export function classifyMongoError(err: unknown, op: string): MemgateError {
  if (err instanceof MemgateError) return err;
  const what = `mongo ${op}`;
  if (
    err instanceof MongoNetworkError ||
    err instanceof MongoServerSelectionError ||
    err instanceof MongoOperationTimeoutError ||
    // Closed or not yet connected: this process is shutting down or starting; another worker can take the job.
    err instanceof MongoTopologyClosedError ||
    err instanceof MongoClientClosedError ||
    err instanceof MongoNotConnectedError
  ) {
    return new MemgateError('unavailable', `${what}: ${err.name} (${short(err)})`, { cause: err, retryable: true });
  }
  if (err instanceof MongoError) {
    const retryable = err.hasErrorLabel('RetryableWriteError') || err.hasErrorLabel('TransientTransactionError') || err.hasErrorLabel('RetryableError');
    if (retryable) return new MemgateError('unavailable', `${what}: ${short(err)}`, { cause: err, retryable: true });
    return new MemgateError('internal', `${what}: ${err.name} ${String(err.code ?? '')} (${short(err)})`, { cause: err, retryable: false });
  }
  return toMemgateError(err);
}

function short(err: Error): string {
  const msg = err.message.replace(/\s+/g, ' ').trim();
  return msg.length > 200 ? `${msg.slice(0, 200)}…` : msg;
}
