import { Packr, Unpackr } from 'msgpackr';
import type { Encoding } from './types.ts';

/** Encodes requests and decodes replies in one wire encoding. */
export interface ClientCodec {
  readonly binary: boolean;
  encode(frame: object): string | Buffer;
  decode(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): unknown;
}

/** The codec of an encoding. Replies are decoded by their frame type, whatever the request encoding was. */
export function clientCodec(encoding: Encoding): ClientCodec {
  const packr = new Packr({ useRecords: false });
  const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number' });
  const binary = encoding === 'msgpack';
  return {
    binary,
    encode: (frame) => (binary ? packr.pack(frame) : JSON.stringify(frame)),
    decode: (data, isBinary) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      return isBinary ? unpackr.unpack(buf) : JSON.parse(buf.toString('utf8'));
    },
  };
}
