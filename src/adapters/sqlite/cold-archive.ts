import type { Scope, Turn } from '../../core/types.ts';
import type { ColdArchive, ColdHit } from '../../ports/cold-archive.ts';
import type { Database } from './database.ts';
import { buildFtsMatch, ftsScopeToken } from './fts-query.ts';
import { migrate } from './migrations.ts';

/**
 * Tier 3, embedded: verbatim turns as JSON rows plus an FTS5 index
 * (unicode61, diacritics removed) ranked by bm25. `rank` is -bm25, so larger
 * is better as the port wants.
 */
export class SqliteColdArchive implements ColdArchive {
  private readonly q;
  private readonly archiveTx;
  private readonly forgetTx;

  /** `db` is shared and stays open after `close()`: its opener closes it. */
  constructor(db: Database) {
    migrate(db);
    this.q = {
      find: db.prepare<[string, string, string, string], { id: number }>('SELECT id FROM ca_turns WHERE tenant_id = ? AND agent_id = ? AND user_id = ? AND turn_id = ?'),
      insert: db.prepare<[string, string, string, string, string], { id: number }>('INSERT INTO ca_turns (tenant_id, agent_id, user_id, turn_id, body) VALUES (?, ?, ?, ?, ?) RETURNING id'),
      update: db.prepare('UPDATE ca_turns SET body = ? WHERE id = ?'),
      ftsDelete: db.prepare('DELETE FROM ca_fts WHERE rowid = ?'),
      ftsInsert: db.prepare('INSERT INTO ca_fts (rowid, sk, text) VALUES (?, ?, ?)'),
      // Column weights: the scope token scores nothing, only the text ranks.
      search: db.prepare<[string, number], { body: string; score: number }>(
        `SELECT t.body AS body, bm25(ca_fts, 0.0, 1.0) AS score
         FROM ca_fts JOIN ca_turns t ON t.id = ca_fts.rowid
         WHERE ca_fts MATCH ? ORDER BY score LIMIT ?`,
      ),
      count: db.prepare<[string, string, string], { n: number }>('SELECT COUNT(*) AS n FROM ca_turns WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
      forgetFts: db.prepare('DELETE FROM ca_fts WHERE rowid IN (SELECT id FROM ca_turns WHERE tenant_id = ? AND agent_id = ? AND user_id = ?)'),
      forget: db.prepare('DELETE FROM ca_turns WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
    };
    this.archiveTx = db.transaction((scope: Scope, turns: readonly Turn[]) => this.archiveIn(scope, turns)).immediate;
    this.forgetTx = db.transaction((scope: Scope) => this.forgetIn(scope)).immediate;
  }

  /** Upsert by turnId: re-archiving (a redelivered job) replaces, never duplicates. */
  async archive(scope: Scope, turns: readonly Turn[]): Promise<void> {
    if (turns.length > 0) this.archiveTx(scope, turns);
  }

  /** Never throws on odd input: the query is rebuilt from words only (see buildFtsMatch). */
  async search(scope: Scope, query: string, k: number): Promise<ColdHit[]> {
    const match = buildFtsMatch(scope, query);
    if (match === null || k <= 0) return [];
    return this.q.search.all(match, Math.floor(k)).map((r) => ({ turn: JSON.parse(r.body) as Turn, rank: -r.score }));
  }

  async count(scope: Scope): Promise<number> {
    return this.q.count.get(scope.tenantId, scope.agentId, scope.userId)?.n ?? 0;
  }

  async forget(scope: Scope): Promise<void> {
    this.forgetTx(scope);
  }

  /** Nothing to release: the shared Database is closed by whoever opened it. */
  async close(): Promise<void> {}

  private archiveIn(scope: Scope, turns: readonly Turn[]): void {
    const sk = ftsScopeToken(scope);
    for (const turn of turns) {
      const body = JSON.stringify(turn);
      const existing = this.q.find.get(scope.tenantId, scope.agentId, scope.userId, turn.turnId);
      let id: number;
      if (existing) {
        id = existing.id;
        this.q.update.run(body, id);
        this.q.ftsDelete.run(id);
      } else {
        id = this.q.insert.get(scope.tenantId, scope.agentId, scope.userId, turn.turnId, body)!.id;
      }
      this.q.ftsInsert.run(id, sk, turn.text);
    }
  }

  private forgetIn(scope: Scope): void {
    this.q.forgetFts.run(scope.tenantId, scope.agentId, scope.userId);
    this.q.forget.run(scope.tenantId, scope.agentId, scope.userId);
  }
}
