import { Packr } from 'msgpackr';
import type { Turn } from '../../core/types.ts';

/** Plain MessagePack maps (no msgpackr records), so any decoder (even Lua's cmsgpack) can read the entries. */
const packr = new Packr({ useRecords: false });

/** The turn as stored: everything but `seq`, which is the stream entry id. */
type StoredTurn = Omit<Turn, 'seq'>;

/** msgpack of a turn without its seq, as `turnFields` shaped it (optional fields absent, never nil). */
export function encodeTurn(turn: StoredTurn): Buffer {
  return packr.pack(turn);
}

/** The turn back from a stream entry: `seq` comes from the entry id `<seq>-0`. */
export function decodeTurn(data: Buffer, seq: number): Turn {
  const stored = packr.unpack(data) as StoredTurn;
  return { ...stored, seq };
}

/** Seq of a stream entry id `<seq>-0` (string or Buffer). */
export function seqOfEntryId(id: string | Buffer): number {
  const text = typeof id === 'string' ? id : id.toString('latin1');
  return Number.parseInt(text, 10);
}

/** Value of field `name` in a flat XRANGE field list [k1, v1, k2, v2, …]. */
export function entryField(fields: readonly Buffer[], name: string): Buffer | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i]?.toString('latin1') === name) return fields[i + 1];
  }
  return undefined;
}
