import { stableHash } from '../../core/ids.ts';
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
  const words = [...new Set((text.normalize('NFC').toLowerCase().match(WORD) ?? []))];
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
  const ored = terms.map((t) => `"${t}"`).join(' OR ');
  return `sk : "${ftsScopeToken(scope)}" AND text : (${ored})`;
}
