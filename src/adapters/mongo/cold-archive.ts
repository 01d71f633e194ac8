import type { Collection, Db } from 'mongodb';
import type { Scope, Turn } from '../../core/types.ts';
import type { ColdArchive, ColdHit } from '../../ports/cold-archive.ts';
import { archiveOps, fromColdRecord, textSearchQuery, type ColdRecord, type ScoredColdRecord } from './cold-queries.ts';
import { COLLECTIONS, scopeFilter } from './records.ts';
import { MongoStoreBase } from './store-base.ts';

/**
 * Tier 3 on MongoDB: verbatim turns in `cold_turns`, keyword-searched with `$text` on a
 * compound (scope, text) index. `rank` is MongoDB's textScore (larger = better).
 */
export class MongoColdArchive extends MongoStoreBase implements ColdArchive {
  private readonly turns: Collection<ColdRecord>;

  /** `release` is called once on the first `close()` (the factory shares one client between stores). */
  constructor(db: Db, release: () => Promise<void> = async () => {}) {
    super(release);
    this.turns = db.collection<ColdRecord>(COLLECTIONS.cold);
  }

  /** Upsert by turnId: re-archiving (a redelivered job) replaces, never duplicates. */
  async archive(scope: Scope, turns: readonly Turn[]): Promise<void> {
    if (turns.length === 0) return;
    await this.call('archive', () => this.turns.bulkWrite(archiveOps(scope, turns), { ordered: false }));
  }

  /** Never throws on odd input: the `$search` string is rebuilt from words only. */
  async search(scope: Scope, query: string, k: number): Promise<ColdHit[]> {
    const q = textSearchQuery(scope, query, k);
    if (q === null) return [];
    const docs = await this.call('search', () => this.turns.find<ScoredColdRecord>(q.filter, q.options).toArray());
    return docs.map((d) => ({ turn: fromColdRecord(d), rank: d.score }));
  }

  async count(scope: Scope): Promise<number> {
    return this.call('count', () => this.turns.countDocuments(scopeFilter(scope)));
  }

  async forget(scope: Scope): Promise<void> {
    await this.call('forget', () => this.turns.deleteMany(scopeFilter(scope)));
  }
}
