import type { Turn } from './types.ts';

/** A turn as a caller or a store hands it over: optional fields may be absent, undefined or a store's null. */
export type LooseTurn = Omit<Turn, 'seq' | 'speaker' | 'asrConfidence' | 'interrupted'> & {
  speaker?: string | null | undefined;
  asrConfidence?: number | null | undefined;
  interrupted?: boolean | null | undefined;
};

/**
 * The turn with only the port's fields (whatever else the object carried stays
 * out of storage), optional fields left out rather than stored as undefined or
 * null. `sessionId` overrides the object's; `seq` is added when given.
 */
export function turnFields(t: LooseTurn, sessionId: string = t.sessionId): Omit<Turn, 'seq'> {
  const out: Omit<Turn, 'seq'> = { turnId: t.turnId, sessionId, role: t.role, text: t.text, ts: t.ts, receivedAt: t.receivedAt, tokens: t.tokens };
  if (t.speaker !== undefined && t.speaker !== null) out.speaker = t.speaker;
  if (t.asrConfidence !== undefined && t.asrConfidence !== null) out.asrConfidence = t.asrConfidence;
  if (t.interrupted !== undefined && t.interrupted !== null) out.interrupted = t.interrupted;
  return out;
}

/** {@link turnFields} with its seq. */
export function withSeq(t: LooseTurn, seq: number, sessionId: string = t.sessionId): Turn {
  const out = turnFields(t, sessionId) as Turn;
  out.seq = seq;
  return out;
}
