import type { Role, Turn } from '../../core/types.ts';
import { withSeq } from '../../core/turn-fields.ts';

/** A `tb_turns` row as better-sqlite3 returns it. */
export interface TurnRow {
  seq: number;
  turn_id: string;
  session_id: string;
  role: string;
  text: string;
  ts: number;
  received_at: number;
  tokens: number;
  speaker: string | null;
  asr_confidence: number | null;
  interrupted: number | null;
}

/** Column values of a turn in `tb_turns` column order after `uid` (NULL for absent optional fields). */
export function turnParams(uid: number, turn: Turn): unknown[] {
  return [
    uid,
    turn.seq,
    turn.turnId,
    turn.sessionId,
    turn.role,
    turn.text,
    turn.ts,
    turn.receivedAt,
    turn.tokens,
    turn.speaker ?? null,
    turn.asrConfidence ?? null,
    turn.interrupted === undefined ? null : turn.interrupted ? 1 : 0,
  ];
}

/** Row → Turn: optional fields absent (not null) when they were not given, so round-trips are exact. */
export function rowToTurn(row: TurnRow): Turn {
  const turn: Turn = {
    turnId: row.turn_id,
    seq: row.seq,
    sessionId: row.session_id,
    role: row.role as Role,
    text: row.text,
    ts: row.ts,
    receivedAt: row.received_at,
    tokens: row.tokens,
  };
  if (row.speaker !== null) turn.speaker = row.speaker;
  if (row.asr_confidence !== null) turn.asrConfidence = row.asr_confidence;
  if (row.interrupted !== null) turn.interrupted = row.interrupted === 1;
  return turn;
}

/** The Turn an append stores: only the port's fields, whatever else the caller's object carried. */
export function toStoredTurn(seq: number, sessionId: string, input: Omit<Turn, 'seq' | 'turnId'> & { turnId: string }): Turn {
  return withSeq(input, seq, sessionId);
}
