import { Packr } from 'msgpackr';

/**
 * Seeded generators of malformed requests for the fuzz suite. Every case names
 * what it breaks, so a failure reads as "append.ts: huge number" and replays
 * with the same MEMGATE_FAULT_SEED.
 */

export type Rand = () => number;
const packr = new Packr({ useRecords: false });

export const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

/** Values of every wrong kind a field can take. */
export function oddValue(r: Rand): { what: string; value: unknown } {
  const n = Math.floor(r() * 18);
  switch (n) {
    case 0:
      return { what: 'null', value: null };
    case 1:
      return { what: 'huge number', value: 1e300 };
    case 2:
      return { what: 'negative', value: -1 };
    case 3:
      return { what: 'max safe int', value: Number.MAX_SAFE_INTEGER };
    case 4:
      return { what: 'float', value: 0.5 };
    case 5:
      return { what: 'empty string', value: '' };
    case 6:
      return { what: 'long string', value: 'x'.repeat(200 + Math.floor(r() * 5000)) };
    case 7:
      return { what: 'object', value: { a: { b: 1 } } };
    case 8:
      return { what: 'array', value: [1, 'two', null] };
    case 9:
      return { what: 'boolean', value: r() < 0.5 };
    case 10:
      return { what: 'odd timestamp string', value: pick(r, ['+275760-09-13T00:00:00.001Z', '0000-00-00', '1e20', 'yesterday', '2026-13-45T99:99:99Z']) };
    case 11:
      return { what: 'lone surrogate', value: 'a\uD800b' };
    case 12:
      return { what: 'control characters', value: '\u0000\u0001\u001f' };
    case 13:
      return { what: 'odd id', value: pick(r, ['../../etc/passwd', 'a/b', '%2F', ' ', '\u200b', 'x'.repeat(129), '{}']) };
    case 14:
      return { what: 'deep nesting', value: deep(40 + Math.floor(r() * 60)) };
    case 15:
      return { what: 'number 1e20', value: 1e20 };
    case 16:
      return { what: 'emoji', value: '🙂'.repeat(1 + Math.floor(r() * 40)) };
    default:
      return { what: 'NaN-ish string', value: 'NaN' };
  }
}

function deep(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = { v };
  return v;
}

/** A well-formed request of each op, for mutation. */
export function baseFrame(r: Rand, op: string, ids: { agentId: string; userId: string }): Record<string, unknown> {
  switch (op) {
    case 'start':
      return { op, id: 1, agentId: ids.agentId, userId: ids.userId };
    case 'append':
      return { op, id: 2, role: pick(r, ['user', 'agent']), text: 'My budget is 50 lakhs', turnId: `t-${Math.floor(r() * 1e9)}`, ts: Date.now(), asrConfidence: 0.9 };
    case 'search':
      return { op, id: 3, query: 'budget', k: 5, deadlineMs: 200 };
    case 'subscribe':
      return { op, id: 4, topics: [`user/${ids.agentId}/${ids.userId}`] };
    case 'unsubscribe':
      return { op, id: 5, topics: [`user/${ids.agentId}/${ids.userId}`] };
    case 'end':
      return { op, id: 6 };
    default:
      return { op, id: 7 };
  }
}

/** Mutate one field of a frame (or drop it, or add junk). */
export function mutate(r: Rand, frame: Record<string, unknown>): { what: string; frame: Record<string, unknown> } {
  const keys = Object.keys(frame);
  const key = pick(r, keys);
  const roll = r();
  if (roll < 0.2) {
    const { [key]: _, ...rest } = frame;
    return { what: `missing ${key}`, frame: rest };
  }
  if (roll < 0.25) return { what: 'unknown field', frame: { ...frame, ['x'.repeat(1 + Math.floor(r() * 300))]: oddValue(r).value } };
  const odd = oddValue(r);
  return { what: `${key}: ${odd.what}`, frame: { ...frame, [key]: odd.value } };
}

/** MessagePack bytes of `frame` with invalid UTF-8 spliced into one of its strings. */
export function msgpackWithBadUtf8(r: Rand, frame: Record<string, unknown>): Uint8Array {
  const strKeys = Object.keys(frame).filter((k) => typeof frame[k] === 'string');
  const key = strKeys.length > 0 ? pick(r, strKeys) : 'op';
  const marker = 'ZZZZ';
  const bytes = packr.pack({ ...frame, [key]: marker });
  const at = Buffer.from(bytes).indexOf(Buffer.from(marker));
  const out = Uint8Array.from(bytes);
  // Same length, so the str header stays right: two bytes that are never valid UTF-8 here.
  out[at] = pick(r, [0xff, 0xfe, 0xc0, 0xed]);
  out[at + 1] = pick(r, [0x41, 0x80, 0xa0]);
  return out;
}

/** Bytes that are not a valid frame of either encoding. */
export function garbage(r: Rand): { what: string; bytes: Uint8Array; binary: boolean } {
  const n = Math.floor(r() * 6);
  const rand = (len: number) => Uint8Array.from({ length: len }, () => Math.floor(r() * 256));
  switch (n) {
    case 0:
      return { what: 'random bytes (binary)', bytes: rand(1 + Math.floor(r() * 200)), binary: true };
    case 1:
      return { what: 'truncated msgpack', bytes: packr.pack({ op: 'append', text: 'hello there' }).subarray(0, 8), binary: true };
    case 2:
      return { what: 'msgpack array', bytes: packr.pack([1, 2, 3]), binary: true };
    case 3:
      return { what: 'truncated JSON', bytes: new TextEncoder().encode('{"op":"append","text":"x'), binary: false };
    case 4:
      return { what: 'JSON scalar', bytes: new TextEncoder().encode(pick(r, ['1', '"x"', 'null', 'true', '[]'])), binary: false };
    default:
      return { what: 'deep JSON array', bytes: new TextEncoder().encode('['.repeat(5000) + ']'.repeat(5000)), binary: false };
  }
}

export function encodeJson(frame: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(frame));
}
export function encodeMsgpack(frame: unknown): Uint8Array {
  return packr.pack(frame);
}
