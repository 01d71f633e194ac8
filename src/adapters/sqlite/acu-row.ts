import type { Acu } from '../../core/types.ts';

/** An `acu_items` row as better-sqlite3 returns it. */
export interface AcuRow {
  rid: number;
  id: string;
  text: string;
  embedding: Buffer;
  turn_refs: string;
  session_id: string;
  valid_at: string;
  created_at: string;
  content_hash: string;
}

/** Float32 little-endian bytes of a vector, as stored in the `embedding` BLOB. */
export function embeddingBlob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** Row → Acu; the embedding is copied out, so callers may keep or mutate it. */
export function rowToAcu(row: AcuRow): Acu {
  return {
    id: row.id,
    text: row.text,
    embedding: new Float32Array(new Uint8Array(row.embedding).buffer),
    turnRefs: JSON.parse(row.turn_refs) as string[],
    sessionId: row.session_id,
    validAt: row.valid_at,
    createdAt: row.created_at,
    contentHash: row.content_hash,
  };
}
