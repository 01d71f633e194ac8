import { Packr, Unpackr, type Options } from 'msgpackr';
import { MemgateError } from '../core/errors.ts';
import type { EncodedContext } from '../core/types.ts';
import { contextFields, spliceContextJson } from '../memory/encoded-context.ts';
import { msgpackStringsAreUtf8 } from './msgpack-strings.ts';

/**
 * Frame codec: JSON text frames and MessagePack binary frames carry the same
 * shapes. Decoding runs synchronously inside the uWS message callback, because
 * the ArrayBuffer uWS lends us is neutered when the callback returns.
 */

/** A decoded request: a plain object (its fields are validated per op). */
export type Frame = Record<string, unknown>;

// Standard MessagePack only: msgpackr's record extension would be unreadable to other clients.
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number' });
// `skipValues` drops undefined properties, as JSON.stringify does (not in msgpackr's typings).
const packr = new Packr({ useRecords: false, skipValues: [undefined] } as Options);
const utf8 = new TextDecoder('utf-8');

/** Decode a frame into a plain object, or throw `bad_request` (malformed JSON/MessagePack, not an object). Strings are checked by `assertValidStrings`. */
export function decodeFrame(message: ArrayBuffer, isBinary: boolean): Frame {
  let value: unknown;
  if (isBinary) {
    try {
      value = unpackr.unpack(new Uint8Array(message));
    } catch {
      throw new MemgateError('bad_request', 'malformed MessagePack frame');
    }
  } else {
    // uWS has already rejected text frames that are not valid UTF-8 (RFC 6455 §8.1).
    try {
      value = JSON.parse(utf8.decode(message));
    } catch {
      throw new MemgateError('bad_request', 'malformed JSON frame');
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Uint8Array) {
    throw new MemgateError('bad_request', 'a frame must be an object');
  }
  return value as Frame;
}

/** Deeper than any request shape: a frame nested past it is refused rather than walked. */
const MAX_DEPTH = 16;

/**
 * Refuse a decoded request holding a string that was not valid UTF-8: a lone
 * surrogate (a JSON `\uD800` escape) or, in MessagePack, bytes msgpackr turned
 * into U+FFFD. Every field counts, not just `text`: two different invalid
 * `turnId`s would otherwise decode to the same string and the second turn would
 * be acked as a duplicate and dropped. `raw` is the MessagePack frame.
 */
export function assertValidStrings(value: unknown, raw?: ArrayBuffer, depth = 0): void {
  if (typeof value === 'string') {
    if (!isWellFormed(value) || (raw !== undefined && !cameAsValidUtf8(value, raw))) throw new MemgateError('bad_request', 'strings must be valid UTF-8');
    return;
  }
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array || value instanceof Date) return;
  if (depth >= MAX_DEPTH) throw new MemgateError('bad_request', `request nested deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) {
    for (const v of value) assertValidStrings(v, raw, depth + 1);
    return;
  }
  for (const k in value) {
    assertValidStrings(k, raw, depth + 1);
    assertValidStrings((value as Record<string, unknown>)[k], raw, depth + 1);
  }
}

/** Encode a reply in the request's encoding: a JSON string for text, MessagePack bytes for binary. */
export function encodeFrame(value: object, isBinary: boolean): string | Uint8Array {
  return isBinary ? packr.pack(value) : JSON.stringify(value);
}

/**
 * The append ack, hand-built for JSON so the hot path allocates one string and no
 * intermediate object. `id` and `turnId` go through JSON.stringify for escaping.
 */
export function encodeAck(id: string | number | null, turnId: string, seq: number, duplicate: boolean, isBinary: boolean): string | Uint8Array {
  if (isBinary) return packr.pack({ op: 'ack', id, turnId, seq, duplicate });
  return `{"op":"ack","id":${JSON.stringify(id)},"turnId":${JSON.stringify(turnId)},"seq":${seq},"duplicate":${duplicate}}`;
}

/**
 * The session-start reply: for JSON (and `id` undefined = the HTTP body, no op/id)
 * the cached fields are spliced in as bytes, never parsed; MessagePack replies
 * need them as values.
 */
export function encodeContextReply(id: string | number | null | undefined, sessionId: string, context: EncodedContext, tookMs: number, isBinary: boolean, reopened = false): string | Uint8Array {
  if (isBinary) return packr.pack({ op: 'context', id, sessionId, ...(reopened ? { reopened } : {}), ...contextFields(context), tookMs });
  const head = id === undefined ? '{' : `{"op":"context","id":${JSON.stringify(id)},`;
  return spliceContextJson(`${head}"sessionId":${JSON.stringify(sessionId)},${reopened ? '"reopened":true,' : ''}`, context, `,"tookMs":${tookMs}}`);
}

/**
 * True when a MessagePack-decoded string was valid UTF-8 on the wire. msgpackr
 * replaces invalid bytes with U+FFFD, so only a frame with a string holding
 * U+FFFD needs the (rare) walk over its raw str payloads, once per frame.
 */
export function cameAsValidUtf8(decoded: string, frame: ArrayBuffer): boolean {
  if (decoded.indexOf('\uFFFD') === -1) return true;
  let valid = walked.get(frame);
  if (valid === undefined) {
    valid = msgpackStringsAreUtf8(new Uint8Array(frame));
    walked.set(frame, valid);
  }
  return valid;
}
const walked = new WeakMap<ArrayBuffer, boolean>();

/** True when a string has no lone surrogates (JSON `\uD800` escapes cannot be stored as UTF-8). */
export function isWellFormed(s: string): boolean {
  return (s as string & { isWellFormed(): boolean }).isWellFormed();
}
