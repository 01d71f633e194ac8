import { Packr } from 'msgpackr';

/**
 * MessagePack for plain-data blobs (contexts, hot documents): smaller and faster
 * to decode than JSON. Records are off so a blob decodes without shared
 * structure state, in any process, after any restart.
 */
const packr = new Packr({ useRecords: false });

/** Encode plain data (objects, arrays, strings, numbers, booleans, null). */
export function packPlain(value: unknown): Buffer {
  return packr.pack(value);
}

/** Decode a blob written by `packPlain`. */
export function unpackPlain<T>(blob: Uint8Array): T {
  return packr.unpack(blob) as T;
}
