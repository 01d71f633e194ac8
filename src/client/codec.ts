import { Packr, Unpackr } from 'msgpackr';
import type { Encoding } from './types.ts';

/** Encodes requests and decodes replies in one wire encoding (no Node APIs: the browser build shares it). */
export interface ClientCodec {
  readonly binary: boolean;
  encode(frame: object): string | Uint8Array;
  decode(data: string | Uint8Array, isBinary: boolean): unknown;
}

/** The codec of an encoding. Replies are decoded by their frame type, whatever the request encoding was. */
export function clientCodec(encoding: Encoding): ClientCodec {
  const packr = new Packr({ useRecords: false });
  const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number' });
  const binary = encoding === 'msgpack';
  const text = new TextDecoder();
  return {
    binary,
    encode: (frame) => (binary ? packr.pack(frame) : JSON.stringify(frame)),
    decode: (data, isBinary) => {
      if (isBinary) return unpackr.unpack(typeof data === 'string' ? new TextEncoder().encode(data) : data);
      return JSON.parse(typeof data === 'string' ? data : text.decode(data));
    },
  };
}
