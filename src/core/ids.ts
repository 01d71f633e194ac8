import { createHash, randomUUID } from 'node:crypto';

/** Longest agentId / userId / sessionId / turnId accepted at an edge. */
export const MAX_ID_CHARS = 128;

/** A fresh random id (server-made turn ids, session ids). */
export function newId(prefix = ''): string {
  return prefix + randomUUID();
}

/** Deterministic short hash: content hashes and idempotent record ids. */
export function stableHash(...parts: string[]): string {
  const h = createHash('sha256');
  for (const p of parts) {
    h.update(p);
    h.update('\u0000');
  }
  return h.digest('hex').slice(0, 32);
}

/** Deterministic UUID (v4 layout) from content: Qdrant point ids must be UUIDs or integers. */
export function stableUuid(...parts: string[]): string {
  const h = stableHash(...parts);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
