import type { Db, IndexDescription } from 'mongodb';
import { COLLECTIONS } from './records.ts';

/** `hot`: one document per user, also found by scope (forget, admin queries). */
export const HOT_INDEXES: readonly IndexDescription[] = [{ key: { tenantId: 1, agentId: 1, userId: 1 }, name: 'scope', unique: true }];

/**
 * `cold_turns`: a text index can serve only `$text` queries, so count and forget get their own
 * scope index. The text index is compound with the scope as its equality prefix. The language
 * override field is renamed so that a future `language` field on a turn is not taken as the
 * stemming language of that document.
 */
export const COLD_INDEXES: readonly IndexDescription[] = [
  { key: { tenantId: 1, agentId: 1, userId: 1, ts: 1 }, name: 'scope_ts' },
  {
    key: { tenantId: 1, agentId: 1, userId: 1, text: 'text' },
    name: 'scope_text',
    default_language: 'english',
    language_override: 'mgTextLanguage',
  },
];

/**
 * Create every index the adapters rely on (idempotent: an existing identical index is a no-op;
 * a same-named index with other options fails loudly rather than being silently replaced).
 */
export async function ensureIndexes(db: Db): Promise<void> {
  await Promise.all([db.collection(COLLECTIONS.hot).createIndexes([...HOT_INDEXES]), db.collection(COLLECTIONS.cold).createIndexes([...COLD_INDEXES])]);
}
