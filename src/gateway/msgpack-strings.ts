import { isUtf8 } from 'node:buffer';

/**
 * Whether every string in a MessagePack frame is valid UTF-8 on the wire.
 * msgpackr decodes invalid bytes to U+FFFD without a word, so two different
 * invalid `turnId`s would decode alike; checking the decoded text cannot tell
 * a genuine U+FFFD from a replaced byte, so this walks the raw frame and tests
 * each str payload's bytes. A frame that ends early or uses the reserved 0xc1
 * is left to the decoder (it refuses those).
 */
export function msgpackStringsAreUtf8(frame: Uint8Array): boolean {
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const end = frame.byteLength;
  let pos = 0;
  let pending = 1; // values still to read: containers add their items
  while (pending > 0 && pos < end) {
    pending--;
    const b = frame[pos++]!;
    let strLen = -1;
    let skip = 0;
    if (b <= 0x7f || b >= 0xe0 || b === 0xc0 || b === 0xc2 || b === 0xc3) continue;
    else if (b <= 0x8f) pending += 2 * (b & 0x0f);
    else if (b <= 0x9f) pending += b & 0x0f;
    else if (b <= 0xbf) strLen = b & 0x1f;
    else if (b === 0xd9 || b === 0xda || b === 0xdb) {
      const n = b === 0xd9 ? 1 : b === 0xda ? 2 : 4;
      if (pos + n > end) return true;
      strLen = n === 1 ? view.getUint8(pos) : n === 2 ? view.getUint16(pos) : view.getUint32(pos);
      pos += n;
    } else if (b === 0xc4 || b === 0xc5 || b === 0xc6) {
      const n = b === 0xc4 ? 1 : b === 0xc5 ? 2 : 4;
      if (pos + n > end) return true;
      skip = n + (n === 1 ? view.getUint8(pos) : n === 2 ? view.getUint16(pos) : view.getUint32(pos));
    } else if (b === 0xc7 || b === 0xc8 || b === 0xc9) {
      const n = b === 0xc7 ? 1 : b === 0xc8 ? 2 : 4;
      if (pos + n > end) return true;
      skip = n + 1 + (n === 1 ? view.getUint8(pos) : n === 2 ? view.getUint16(pos) : view.getUint32(pos));
    } else if (b === 0xca) skip = 4;
    else if (b === 0xcb) skip = 8;
    else if (b >= 0xcc && b <= 0xd3) skip = 1 << (b & 0x03);
    else if (b >= 0xd4 && b <= 0xd8) skip = 1 + (1 << (b - 0xd4));
    else if (b === 0xdc || b === 0xdd || b === 0xde || b === 0xdf) {
      const n = b === 0xdc || b === 0xde ? 2 : 4;
      if (pos + n > end) return true;
      const count = n === 2 ? view.getUint16(pos) : view.getUint32(pos);
      pos += n;
      pending += b >= 0xde ? 2 * count : count;
    } else return true; // 0xc1: never used; the decoder has refused the frame already
    if (strLen >= 0) {
      if (pos + strLen > end) return true;
      if (!isUtf8(frame.subarray(pos, pos + strLen))) return false;
      pos += strLen;
    } else pos += skip;
  }
  return true;
}
