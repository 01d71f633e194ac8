import type { Acu, SessionSummary, Turn } from '../core/types.ts';
import { iso } from '../core/clock.ts';
import { fitSentences, summarySentences } from '../text/sentences.ts';

const MAX_SUMMARY_CHARS = 480;

/**
 * Session summaries from the window's ACUs: one per session, extended as later
 * windows of the same session are compressed. Cheap and model-free on purpose:
 * the ACUs are already self-contained sentences. A summary says what was learnt or
 * decided, so questions (asked, or asked and answered in quotes) are left to search,
 * the "as of <day>" each ACU carries is dropped (the summary is dated), a sentence an
 * earlier summary already says is not repeated, and only whole sentences are kept.
 */
export function mergeSummaries(existing: readonly SessionSummary[], window: readonly Turn[], acus: readonly Acu[], max: number): SessionSummary[] {
  const bySession = new Map<string, SessionSummary>(existing.map((s) => [s.sessionId, { ...s }]));
  const sessions = [...new Set(window.map((t) => t.sessionId))];
  for (const sessionId of sessions) {
    const turns = window.filter((t) => t.sessionId === sessionId);
    const said = new Set([...bySession.values()].flatMap((s) => summarySentences(s.text)).map(sentenceKey));
    const texts: string[] = [];
    for (const a of acus) {
      if (a.sessionId !== sessionId) continue;
      for (const s of summarySentences(a.text)) {
        const key = sentenceKey(s);
        if (said.has(key) || !statesSomething(s)) continue;
        said.add(key);
        texts.push(s);
      }
    }
    if (texts.length === 0) continue;
    const from = iso(Math.min(...turns.map((t) => t.ts)));
    const to = iso(Math.max(...turns.map((t) => t.ts)));
    const prev = bySession.get(sessionId);
    bySession.set(sessionId, {
      sessionId,
      text: fitSentences([...(prev ? summarySentences(prev.text) : []), ...texts], MAX_SUMMARY_CHARS),
      from: prev && prev.from < from ? prev.from : from,
      to: prev && prev.to > to ? prev.to : to,
    });
  }
  return [...bySession.values()].sort((a, b) => a.from.localeCompare(b.from)).slice(-max);
}

// A question, or a question quoted with its answer: what was asked, not what was learnt.
const ASKED = /\basked\s+"|\?"?\.?$/;

function statesSomething(sentence: string): boolean {
  return !ASKED.test(sentence);
}

const sentenceKey = (s: string): string =>
  s
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
