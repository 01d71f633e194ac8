import type { Acu, SessionSummary, Turn } from '../core/types.ts';
import { iso } from '../core/clock.ts';

const MAX_SUMMARY_CHARS = 480;

/**
 * Session summaries from the window's ACUs: one per session, extended as later
 * windows of the same session are compressed. Cheap and model-free on purpose:
 * the ACUs are already self-contained sentences.
 */
export function mergeSummaries(existing: readonly SessionSummary[], window: readonly Turn[], acus: readonly Acu[], max: number): SessionSummary[] {
  const bySession = new Map<string, SessionSummary>(existing.map((s) => [s.sessionId, { ...s }]));
  const sessions = [...new Set(window.map((t) => t.sessionId))];
  for (const sessionId of sessions) {
    const turns = window.filter((t) => t.sessionId === sessionId);
    const texts = acus.filter((a) => a.sessionId === sessionId).map((a) => a.text);
    if (texts.length === 0) continue;
    const from = iso(Math.min(...turns.map((t) => t.ts)));
    const to = iso(Math.max(...turns.map((t) => t.ts)));
    const prev = bySession.get(sessionId);
    const joined = [prev?.text, ...texts].filter(Boolean).join(' ');
    bySession.set(sessionId, {
      sessionId,
      text: joined.length > MAX_SUMMARY_CHARS ? joined.slice(0, MAX_SUMMARY_CHARS - 1).trimEnd() + '…' : joined,
      from: prev && prev.from < from ? prev.from : from,
      to: prev && prev.to > to ? prev.to : to,
    });
  }
  return [...bySession.values()].sort((a, b) => a.from.localeCompare(b.from)).slice(-max);
}
