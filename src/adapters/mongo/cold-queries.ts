/**
 * The pure half of the Mongo cold archive: record shape, deterministic ids, the idempotent
 * bulk upsert and the `$text` query. MongoDB's text search runs on a compound text index whose
 * prefix is the scope, so a query scans only that user's postings (the prefix needs equality
 * conditions, which the scope filter is).
 */
import type { AnyBulkWriteOperation, Filter, FindOptions } from 'mongodb';
import { stableHash } from '../../core/ids.ts';
import type { Scope, Turn } from '../../core/types.ts';
import { scopeFilter, turnRecord, type ScopeFields } from './records.ts';

/** A `cold_turns` document: the verbatim Turn plus its scope. */
export type ColdRecord = ScopeFields & Turn & { _id: string };

/** A ColdRecord as returned by the text search, with the projected text score. */
export type ScoredColdRecord = ColdRecord & { score: number };

/** Query words kept at most: bounds the OR fan-out of a pasted paragraph. */
const MAX_TERMS = 32;
/** A word starts with a letter or digit (a lone combining mark is not one) and keeps its marks. */
const WORD = /[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu;

/** Deterministic `_id` (scope + turnId): archiving the same turn twice hits the same document. */
export function coldId(scope: Scope, turnId: string): string {
  return 'turn:' + stableHash(scope.tenantId, scope.agentId, scope.userId, turnId);
}

/** Turn → stored document. */
export function toColdRecord(scope: Scope, turn: Turn): ColdRecord {
  return { _id: coldId(scope, turn.turnId), ...scopeFilter(scope), ...turnRecord(turn) };
}

/** Stored document (with or without the projected score) → Turn, exactly as archived. */
export function fromColdRecord(rec: ColdRecord): Turn {
  return turnRecord(rec);
}

/** The archive as one unordered bulkWrite of replace-upserts by `_id`: a redelivered job rewrites, never duplicates. */
export function archiveOps(scope: Scope, turns: readonly Turn[]): Array<AnyBulkWriteOperation<ColdRecord>> {
  return turns.map((turn) => {
    const { _id, ...replacement } = toColdRecord(scope, turn);
    return { replaceOne: { filter: { _id }, replacement, upsert: true } };
  });
}

/**
 * Free text → a `$search` string that cannot change meaning: distinct words only, joined by
 * spaces (MongoDB ORs them). Quotes (phrases) and a leading `-` (negation) never survive, so a
 * caller saying "non-vegetarian" or quoting a sentence still gets plain keyword matching.
 * Stop words and stemming are left to the index's language (English). Null when no word remains.
 */
export function textSearchString(text: string): string | null {
  const words = [...new Set(text.normalize('NFC').toLowerCase().match(WORD) ?? [])].slice(0, MAX_TERMS);
  return words.length === 0 ? null : words.join(' ');
}

/** `find` arguments of a keyword search: scope equality + `$text`, best textScore first, newest on ties. */
export function textSearchQuery(scope: Scope, text: string, k: number): { filter: Filter<ColdRecord>; options: FindOptions } | null {
  const search = textSearchString(text);
  if (search === null || k <= 0) return null;
  return {
    filter: { ...scopeFilter(scope), $text: { $search: search } },
    options: {
      projection: { score: { $meta: 'textScore' } },
      sort: { score: { $meta: 'textScore' }, ts: -1 },
      limit: Math.floor(k),
    },
  };
}
