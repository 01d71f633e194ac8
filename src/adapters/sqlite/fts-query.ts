import { stableHash } from '../../core/ids.ts';
import { calendarDates, pad2 } from '../../text/calendar-dates.ts';
import { stem } from '../../text/stem.ts';
import type { Scope } from '../../core/types.ts';
import { STOPWORDS } from './stopwords.ts';

/** Query terms kept at most: bounds the OR fan-out of a pasted paragraph. */
const MAX_TERMS = 32;

/** Letters (with combining marks) and digits: what the unicode61 tokenizer keeps as token characters. */
const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/**
 * The per-user token stored in the `sk` column of the FTS tables. A MATCH on it
 * intersects with one user's postings inside FTS5, instead of ranking every
 * user's matching rows and filtering afterwards.
 */
export function ftsScopeToken(scope: Scope): string {
  return 'u' + stableHash(scope.tenantId, scope.agentId, scope.userId);
}

/**
 * Free text → the distinct search terms: lower-cased words, FTS syntax and
 * symbols (quotes, `*`, `:`, parentheses, emoji) dropped, stopwords dropped
 * unless the query has nothing else.
 */
export function searchTerms(text: string): string[] {
  const words = [...new Set(text.normalize('NFC').toLowerCase().match(WORD) ?? [])];
  const content = words.filter((w) => !STOPWORDS.has(w));
  return (content.length > 0 ? content : words).slice(0, MAX_TERMS);
}

/**
 * A MATCH expression that cannot be a syntax error: every term is a quoted
 * string (so `AND`, `NEAR`, `col:` are plain words), terms are ORed (bm25 rewards
 * rows matching more of them), and the whole is restricted to the user's `sk`.
 * Null when the text has no searchable word (the caller returns no hits).
 */
export function buildFtsMatch(scope: Scope, text: string): string | null {
  const terms = searchTerms(text);
  if (terms.length === 0) return null;
  const ored = [...datePhrases(text), ...terms.map(ftsTerm)].join(' OR ');
  return `sk : "${ftsScopeToken(scope)}" AND text : (${ored})`;
}

/** Shortest stem prefix searched as a prefix: shorter ones ("car" → "career") match unrelated words. */
const MIN_PREFIX = 4;
/** Shortest query word searched by prefix: shorter words gain little and over-match more. */
const MIN_WORD = 6;

/**
 * One query word as an FTS5 term. The index keeps surface forms (no stemmer), so a
 * longer word is searched by the prefix it shares with its stem: "painting" →
 * "paint"* finds "painted" and "paints", "explored" → "explor"* finds "exploring".
 * Short words stay exact.
 */
export function ftsTerm(word: string): string {
  const s = stem(word);
  let n = 0;
  while (n < word.length && n < s.length && word[n] === s[n]) n++;
  // The stemmer's "y" → "i" ("families" → "famili") is no prefix of "family": stop before it.
  if (n === s.length && s.endsWith('i')) n--;
  return word.length >= MIN_WORD && n >= MIN_PREFIX && /^[a-z]/.test(word) ? `"${word.slice(0, n)}"*` : `"${word}"`;
}

/**
 * Calendar dates of the query as phrases of the ISO form ACUs store ("October 13, 2023" →
 * "2023 10 13", "July 2023" → "2023 07", "June 26" → "06 26"): the tokenizer splits
 * "2023-10-13" into consecutive tokens, so the phrase finds the date however the query wrote it.
 */
export function datePhrases(text: string): string[] {
  const phrases = calendarDates(text).dates.map((d) => `"${[d.year, pad2(d.month), d.day === undefined ? undefined : pad2(d.day)].filter((x) => x !== undefined).join(' ')}"`);
  return [...new Set(phrases)];
}
