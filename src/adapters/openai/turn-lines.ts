import { iso } from '../../core/clock.ts';
import type { Turn } from '../../core/types.ts';

/**
 * The turns as JSON lines, oldest first: unambiguous for a model (quotes and newlines in the
 * text are escaped) and carrying everything the prompts refer to (id, speaker, ISO time,
 * recogniser confidence, barge-in).
 */
export function renderTurnLines(turns: readonly Turn[]): string {
  return [...turns]
    .sort((a, b) => a.ts - b.ts || a.seq - b.seq)
    .map((t) =>
      JSON.stringify({
        turnId: t.turnId,
        role: t.role,
        ...(t.speaker === undefined ? {} : { speaker: t.speaker }),
        ts: iso(t.ts),
        ...(t.asrConfidence === undefined ? {} : { asrConfidence: t.asrConfidence }),
        ...(t.interrupted ? { interrupted: true } : {}),
        text: t.text,
      }),
    )
    .join('\n');
}

/** An ISO instant when `value` parses as a date, else undefined (model output is untrusted). */
export function toIsoOrUndefined(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? iso(ms) : undefined;
}
