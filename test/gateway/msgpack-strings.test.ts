import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { msgpackStringsAreUtf8 } from '../../src/gateway/msgpack-strings.ts';

/** The raw-frame walk behind the MessagePack UTF-8 check, over every MessagePack type. */
const packr = new Packr({ useRecords: false });
const long = (n: number) => 'é'.repeat(n);

describe('msgpackStringsAreUtf8', () => {
  it('walks every type (ints, floats, bin, ext, str8/16/32, array16, map16) and accepts valid strings', () => {
    const value = {
      ints: [0, 127, -1, -32, 200, 60_000, 4_000_000_000, -100, -30_000, -2_000_000_000, 2 ** 53 - 1],
      floats: [1.5, 1e300, -0.25],
      bool: [true, false, null],
      bin: new Uint8Array([0xff, 0xfe, 0xc1]),
      date: new Date(1_700_000_000_000),
      str8: long(20),
      str16: long(200),
      str32: long(40_000),
      arr16: Array.from({ length: 20 }, (_, i) => `s${i}`),
      map16: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, `v\uFFFD${i}`])),
      deep: { a: [{ b: ['c'] }] },
    };
    expect(msgpackStringsAreUtf8(packr.pack(value))).toBe(true);
  });

  it('finds invalid bytes in any string, key or value, however deep, after any other type', () => {
    const bad = new Uint8Array([0xa2, 0xff, 0x41]); // fixstr of ff 41
    const prefixes = [
      [0x81, 0xa1, 0x6b], // {k: …}
      [0x92, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0], // [float64, …]
      [0x92, 0xc4, 0x02, 0xff, 0xfe], // [bin ff fe, …]
      [0x92, 0xd7, 0xff, 0, 0, 0, 0, 0, 0, 0, 0], // [timestamp ext, …]
      [0x92, 0xcf, 1, 2, 3, 4, 5, 6, 7, 8], // [uint64, …]
      [0xdc, 0x00, 0x02, 0x01], // array16 [1, …]
      [0x81], // {<bad key>: …} (then a value below)
    ];
    for (const p of prefixes) {
      const frame = new Uint8Array([...p, ...bad, 0xc0]);
      expect(msgpackStringsAreUtf8(frame), p.map((b) => b.toString(16)).join(' ')).toBe(false);
    }
    expect(msgpackStringsAreUtf8(new Uint8Array([0xd9, 0x02, 0xc3, 0x28]))).toBe(false); // str8, truncated 2-byte sequence
    expect(msgpackStringsAreUtf8(new Uint8Array([0xa3, 0xed, 0xa0, 0x80]))).toBe(false); // an encoded surrogate
    expect(msgpackStringsAreUtf8(new Uint8Array([0xa3, 0xef, 0xbf, 0xbd]))).toBe(true); // a genuine U+FFFD
  });

  it('ends on a truncated frame or a huge declared length without reading past it', () => {
    expect(msgpackStringsAreUtf8(new Uint8Array([0xdd, 0xff, 0xff, 0xff, 0xff, 0xa1, 0x41]))).toBe(true);
    expect(msgpackStringsAreUtf8(new Uint8Array([0xdb, 0xff, 0xff, 0xff, 0xff, 0x41]))).toBe(true);
    expect(msgpackStringsAreUtf8(new Uint8Array([0xda]))).toBe(true);
  });
});
