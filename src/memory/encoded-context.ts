import { Packr } from 'msgpackr';
import { Buffer } from 'node:buffer';
import type { EncodedContext, SessionContext } from '../core/types.ts';

/** The session-start reply fields of a SessionContext (docs/protocol.md order). */
export type ContextFields = Pick<SessionContext, 'profile' | 'facts' | 'possibly' | 'recent' | 'summaries' | 'contextBlock' | 'tools'>;

/** Serialise once, when the pipeline (or a cache miss) builds the context. */
export function encodeContext(ctx: SessionContext): EncodedContext {
  const { profile, facts, possibly, recent, summaries, contextBlock, tools } = ctx;
  const json = Buffer.from(JSON.stringify({ profile, facts, possibly, recent, summaries, contextBlock, tools }), 'utf8');
  return { version: ctx.version, builtAt: ctx.builtAt, expiresAt: ctx.expiresAt, json };
}

/** The reply fields as objects (msgpack replies, in-process callers). */
export function contextFields(enc: EncodedContext): ContextFields {
  return JSON.parse(Buffer.from(enc.json.buffer, enc.json.byteOffset, enc.json.byteLength).toString('utf8')) as ContextFields;
}

export function decodeContext(enc: EncodedContext): SessionContext {
  return { ...contextFields(enc), version: enc.version, builtAt: enc.builtAt, expiresAt: enc.expiresAt };
}

/** What a cache adapter stores (as MessagePack): a format tag, so an entry of another layout reads as a miss. */
// Standard MessagePack (no records): any client of the cache's store could read it.
const cachePackr = new Packr({ useRecords: false });

export interface StoredContext extends EncodedContext {
  v: 2;
}

/** The cache's bytes for a built context: what every ContextCache adapter stores. */
export function packContext(ctx: SessionContext): Uint8Array {
  return packEncoded(encodeContext(ctx));
}

/** The cache's bytes for a context already encoded (session start encodes once, for the reply and the cache). */
export function packEncoded(enc: EncodedContext): Uint8Array {
  return cachePackr.pack(toStored(enc));
}

/** A cache entry's bytes back to the encoded context, or null when they are of another layout (a miss rebuilds it). */
export function unpackContext(bytes: Uint8Array): EncodedContext | null {
  try {
    return fromStored(cachePackr.unpack(bytes));
  } catch {
    return null;
  }
}

export function toStored(enc: EncodedContext): StoredContext {
  return { v: 2, version: enc.version, builtAt: enc.builtAt, expiresAt: enc.expiresAt, json: enc.json };
}

/** A decoded cache entry, or null when it is of another layout (derived data: a miss rebuilds it). */
export function fromStored(value: unknown): EncodedContext | null {
  if (typeof value !== 'object' || value === null) return null;
  const s = value as Partial<StoredContext>;
  if (s.v !== 2 || !(s.json instanceof Uint8Array) || typeof s.version !== 'number' || typeof s.builtAt !== 'number') return null;
  return { version: s.version, builtAt: s.builtAt, expiresAt: typeof s.expiresAt === 'number' ? s.expiresAt : null, json: s.json };
}

/**
 * One JSON object from a head, the context's fields and a tail, without parsing them:
 * `head` is `{"a":…,` (opening brace, members, trailing comma), `tail` is `,"z":…}`.
 */
export function spliceContextJson(head: string, enc: EncodedContext, tail: string): Buffer {
  const h = Buffer.from(head, 'utf8');
  const t = Buffer.from(tail, 'utf8');
  const inner = enc.json.byteLength - 2; // without the fields object's own braces
  const out = Buffer.allocUnsafe(h.length + inner + t.length);
  h.copy(out, 0);
  out.set(enc.json.subarray(1, enc.json.byteLength - 1), h.length);
  t.copy(out, h.length + inner);
  return out;
}
