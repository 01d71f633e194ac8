import { createHash } from 'node:crypto';
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { MemgateError } from '../../src/core/errors.ts';
import { bearerToken, createAuthenticator } from '../../src/gateway/auth.ts';
import { assertValidStrings, decodeFrame, encodeAck, encodeFrame } from '../../src/gateway/codec.ts';
import { internalTopic } from '../../src/gateway/events.ts';
import { parseSearch, parseStart, parseTopics, parseTurn, readId } from '../../src/gateway/frames.ts';
import { GatewayMetrics, Histogram } from '../../src/gateway/metrics.ts';

const ab = (s: string | Uint8Array): ArrayBuffer => {
  const u = typeof s === 'string' ? new TextEncoder().encode(s) : s;
  return u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength) as ArrayBuffer;
};
/** Decode as the WebSocket handler does: parse, then check every string. */
const decodeChecked = (m: ArrayBuffer, isBinary: boolean) => {
  const f = decodeFrame(m, isBinary);
  assertValidStrings(f, isBinary ? m : undefined);
  return f;
};
const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as MemgateError).code;
  }
  return 'no error';
};

describe('codec', () => {
  it('decodes JSON text and MessagePack binary frames to the same object', () => {
    const frame = { op: 'append', id: 7, role: 'user', text: 'héllo' };
    expect(decodeFrame(ab(JSON.stringify(frame)), false)).toEqual(frame);
    expect(decodeFrame(ab(new Packr({ useRecords: false }).pack(frame)), true)).toEqual(frame);
  });

  it('refuses malformed frames and non-objects with bad_request', () => {
    expect(codeOf(() => decodeFrame(ab('{"op":'), false))).toBe('bad_request');
    expect(codeOf(() => decodeFrame(ab('[1,2]'), false))).toBe('bad_request');
    expect(codeOf(() => decodeFrame(ab('null'), false))).toBe('bad_request');
    expect(codeOf(() => decodeFrame(ab(new Uint8Array([0x81, 0xa1])), true))).toBe('bad_request');
    expect(codeOf(() => decodeFrame(ab(new Uint8Array([0x05])), true))).toBe('bad_request');
  });

  it('hand-built JSON acks equal JSON.stringify of the same reply, ids escaped', () => {
    const s = encodeAck('a"b', 't\\1', 3, false, false) as string;
    expect(JSON.parse(s)).toEqual({ op: 'ack', id: 'a"b', turnId: 't\\1', seq: 3, duplicate: false });
    expect(JSON.parse(encodeAck(null, 't', 1, true, false) as string)).toEqual({ op: 'ack', id: null, turnId: 't', seq: 1, duplicate: true });
  });

  it('MessagePack replies drop undefined fields like JSON does', () => {
    const bin = encodeFrame({ op: 'x', id: 1, partial: undefined }, true) as Uint8Array;
    expect(decodeFrame(ab(bin), true)).toEqual({ op: 'x', id: 1 });
  });
});

describe('frames', () => {
  it('echoes string and number ids, null when absent, undefined when mistyped', () => {
    expect(readId({ id: 'a' })).toBe('a');
    expect(readId({ id: 0 })).toBe(0);
    expect(readId({})).toBeNull();
    expect(readId({ id: { x: 1 } })).toBeUndefined();
  });

  it('validates an append', () => {
    const t = parseTurn({ role: 'user', text: 'hi', turnId: 't1', ts: '2026-01-02T03:04:05Z', speaker: 'Ann', asrConfidence: 0.5, interrupted: false }, 100);
    expect(t).toMatchObject({ role: 'user', text: 'hi', turnId: 't1', ts: Date.parse('2026-01-02T03:04:05Z'), speaker: 'Ann', asrConfidence: 0.5, interrupted: false });
    expect(parseTurn({ role: 'agent', text: 'ok', ts: 5 }, 100).ts).toBe(5);
    for (const text of ['', '   ', '\n\t ', '\u00a0\u2003', '\u200b', '\u200d\ufeff \u00ad', '\u0000\u2060']) expect(codeOf(() => parseTurn({ role: 'user', text }, 100))).toBe('bad_request');
    expect(codeOf(() => parseTurn({ role: 'bot', text: 'x' }, 100))).toBe('bad_request');
    expect(codeOf(() => parseTurn({ role: 'user' }, 100))).toBe('bad_request');
    expect(codeOf(() => parseTurn({ role: 'user', text: 5 }, 100))).toBe('bad_request');
    expect(codeOf(() => parseTurn({ role: 'user', text: 'x', ts: 'yesterday' }, 100))).toBe('bad_request');
    expect(codeOf(() => parseTurn({ role: 'user', text: 'x', asrConfidence: 2 }, 100))).toBe('bad_request');
    expect(codeOf(() => parseTurn({ role: 'user', text: 'x', interrupted: 'yes' }, 100))).toBe('bad_request');
    expect(codeOf(() => parseTurn({ role: 'user', text: 'x', turnId: '' }, 100))).toBe('bad_request');
    expect(codeOf(() => parseTurn({ role: 'user', text: 'x', turnId: 'x'.repeat(129) }, 100))).toBe('bad_request');
  });

  it('measures the text limit in UTF-8 bytes', () => {
    expect(codeOf(() => parseTurn({ role: 'user', text: 'é'.repeat(50) }, 100))).toBe('no error');
    expect(codeOf(() => parseTurn({ role: 'user', text: 'é'.repeat(51) }, 100))).toBe('too_large');
    expect(codeOf(() => parseTurn({ role: 'user', text: 'x'.repeat(101) }, 100))).toBe('too_large');
  });

  it('refuses any string that is not valid Unicode: lone surrogates, invalid UTF-8 in MessagePack', () => {
    const enc = (t: string) => [...new TextEncoder().encode(t)];
    const str = (bytes: number[]) => [0xa0 | bytes.length, ...bytes];
    // fixmap{role:"user", text:"ok", turnId: <bytes>}: turnId ff41 and fe41 both decode to "\uFFFDA".
    const frameWithTurnId = (id: number[]) => ab(new Uint8Array([0x83, ...str(enc('role')), ...str(enc('user')), ...str(enc('text')), ...str(enc('ok')), ...str(enc('turnId')), ...str(id)]));
    expect(codeOf(() => decodeChecked(frameWithTurnId([0xff, 0x41]), true))).toBe('bad_request');
    expect(codeOf(() => decodeChecked(frameWithTurnId([0xfe, 0x41]), true))).toBe('bad_request');
    expect(codeOf(() => decodeChecked(frameWithTurnId(enc('t-1')), true))).toBe('no error');
    // A genuine "\uFFFDA" elsewhere in the frame must not vouch for the invalid bytes (a search for
    // the decoded text in the raw frame would have found it and let the turnId through).
    const textAndTurnId = (text: number[], id: number[]) => ab(new Uint8Array([0x83, ...str(enc('role')), ...str(enc('user')), ...str(enc('text')), ...str(text), ...str(enc('turnId')), ...str(id)]));
    expect(codeOf(() => decodeChecked(textAndTurnId(enc('\uFFFDA'), [0xff, 0x41]), true))).toBe('bad_request');
    expect(codeOf(() => decodeChecked(textAndTurnId(enc('\uFFFDA'), enc('\uFFFDA')), true))).toBe('no error');
    // Invalid bytes in text, speaker, a nested topic or a key are refused too.
    const packr = new Packr({ useRecords: false });
    expect(codeOf(() => decodeChecked(ab(new Uint8Array([0x81, ...str(enc('text')), ...str([0xc3, 0x28])])), true))).toBe('bad_request');
    expect(codeOf(() => decodeChecked(ab(new Uint8Array([0x81, ...str([0xff]), ...str(enc('x'))])), true))).toBe('bad_request');
    expect(codeOf(() => decodeChecked(ab(new Uint8Array([0x81, ...str(enc('topics')), 0x91, ...str([0xed, 0xa0, 0x80])])), true))).toBe('bad_request');
    // A genuine U+FFFD is text like any other.
    expect(codeOf(() => decodeChecked(ab(packr.pack({ role: 'user', text: 'ok \uFFFD', speaker: '\uFFFD' })), true))).toBe('no error');
    // JSON: a lone surrogate escape in any field.
    const json = (o: string) => ab(new TextEncoder().encode(o));
    expect(codeOf(() => decodeChecked(json('{"op":"append","text":"a\\uD800b"}'), false))).toBe('bad_request');
    expect(codeOf(() => decodeChecked(json('{"op":"append","text":"x","turnId":"\\uDC00"}'), false))).toBe('bad_request');
    expect(codeOf(() => decodeChecked(json('{"op":"append","text":"\\uD83D\\uDE00"}'), false))).toBe('no error');
  });

  it('refuses frames nested deeper than any request', () => {
    const deep = '{"a":'.repeat(40) + '1' + '}'.repeat(40);
    expect(codeOf(() => decodeChecked(ab(new TextEncoder().encode(deep)), false))).toBe('bad_request');
  });

  it('accepts ts only inside the documented window', () => {
    const ts = (v: unknown) => codeOf(() => parseTurn({ role: 'user', text: 'x', ts: v }, 100));
    for (const bad of [1e300, 1e20, Number.MAX_SAFE_INTEGER, 8.64e15 + 1, -1, Number.NaN, Infinity, '275760-09-14T00:00:00Z', '2100-01-01T00:00:00Z', 'soon', new Date(Number.NaN)])
      expect(ts(bad)).toBe('bad_request');
    for (const good of [0, Date.UTC(2026, 11, 3), '2026-12-03T10:00:00+05:30', Date.UTC(2099, 11, 31), new Date(Date.UTC(2024, 0, 1))]) expect(ts(good)).toBe('no error');
    expect(parseTurn({ role: 'user', text: 'x', ts: '2026-12-03T10:00:00Z' }, 100).ts).toBe(Date.UTC(2026, 11, 3, 10));
    expect(() => parseSearch({ query: 'q', asOf: 1e20 })).toThrow(/asOf/);
  });

  it('validates start, search and topics with messages naming the field', () => {
    expect(parseStart({ agentId: 'a', userId: 'u', op: 'start' })).toEqual({ agentId: 'a', userId: 'u' });
    expect(() => parseStart({ agentId: 'a' })).toThrow(/userId/);
    expect(() => parseStart({ agentId: 'a', userId: 'x'.repeat(129) })).toThrow(/userId/);
    expect(() => parseSearch({ query: 'q', k: 0 })).toThrow(/k/);
    expect(() => parseSearch({ query: 7 })).toThrow(/query/);
    expect(() => parseTopics({ topics: [] })).toThrow(/topics/);
  });
});

describe('event topics', () => {
  it('maps client topics into per-tenant, per-encoding names', () => {
    expect(internalTopic('A', 'events', false)).not.toBe(internalTopic('B', 'events', false));
    expect(internalTopic('A', 'events', false)).not.toBe(internalTopic('A', 'events', true));
    expect(internalTopic('A', 'user/ag/u/1', false)).toBe(internalTopic('A', 'user/ag/u/1', false));
    // The tenant is JSON-quoted: no tenant name plus topic can spell another tenant's topic.
    expect(internalTopic('A"aB', 'events', false)).not.toBe(internalTopic('A', 'agent/B', false));
    for (const bad of ['', 'event', 'agent/', 'user/a', 'user//u', 'user/a/', 'other/x']) expect(codeOf(() => internalTopic('A', bad, false))).toBe('bad_request');
  });
});

describe('auth', () => {
  const sha = (k: string) => createHash('sha256').update(k).digest('hex');

  it('open dev mode maps everything to tenant default', () => {
    const a = createAuthenticator([]);
    expect(a.open).toBe(true);
    expect(a.tenantOf(null)).toBe('default');
  });

  it('maps a key to its tenant by sha256, refuses missing and unknown keys', () => {
    const a = createAuthenticator([
      { sha256: sha('k1'), tenantId: 'A' },
      { sha256: sha('k2'), tenantId: 'B' },
    ]);
    expect(a.open).toBe(false);
    expect(a.tenantOf('k1')).toBe('A');
    expect(a.tenantOf('k2')).toBe('B');
    expect(a.tenantOf('k3')).toBeNull();
    expect(a.tenantOf(null)).toBeNull();
    expect(bearerToken('Bearer k1')).toBe('k1');
    expect(bearerToken('bearer  k1 ')).toBe('k1');
    expect(bearerToken('Basic k1')).toBeNull();
    expect(bearerToken('')).toBeNull();
  });
});

describe('metrics', () => {
  it('renders cumulative histograms in seconds', () => {
    const h = new Histogram('x_seconds', 'help', [1, 10]);
    h.observe(0.5);
    h.observe(5);
    h.observe(50);
    const text = h.render();
    expect(text).toContain('x_seconds_bucket{le="0.001"} 1\n');
    expect(text).toContain('x_seconds_bucket{le="0.01"} 2\n');
    expect(text).toContain('x_seconds_bucket{le="+Inf"} 3\n');
    expect(text).toContain('x_seconds_count 3\n');
    expect(text).toContain('x_seconds_sum 0.0555\n');
  });

  it('renders every family with HELP and TYPE', () => {
    const m = new GatewayMetrics();
    m.errors.inc('bad_request');
    const text = m.render(3);
    expect(text).toContain('memgate_errors_total{code="bad_request"} 1');
    expect(text).toContain('memgate_extraction_queue_depth 3');
    expect(text).toContain('# TYPE memgate_append_duration_seconds histogram');
    expect(text).toContain('# TYPE memgate_active_calls gauge');
  });
});
