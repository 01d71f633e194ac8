import type BetterSqlite3 from 'better-sqlite3';
import type { AcuRow } from './acu-row.ts';
import type { Database } from './database.ts';
import type { VectorRow } from './packed-vectors.ts';

type ScopeParams = [tenantId: string, agentId: string, userId: string];
type Stmt<P extends unknown[], R = unknown> = BetterSqlite3.Statement<P, R>;

/** The prepared statements of SqliteAcuIndex, spelled out so the declaration build can name them. */
export interface AcuStatements {
  upsert: Stmt<unknown[], { rid: number }>;
  ftsDelete: Stmt<[number]>;
  ftsInsert: Stmt<[number, string, string]>;
  version: Stmt<ScopeParams, { version: number; since: number }>;
  nextGeneration: Stmt<[], { value: number }>;
  stamp: Stmt<[...ScopeParams, number, number]>;
  vectors: Stmt<ScopeParams, VectorRow>;
  vectorsSince: Stmt<[...ScopeParams, number], VectorRow>;
  byRid: Stmt<[number], AcuRow>;
  keyword: Stmt<[string, number], AcuRow & { score: number }>;
  count: Stmt<ScopeParams, { n: number }>;
  forgetFts: Stmt<ScopeParams>;
  forgetItems: Stmt<ScopeParams>;
  forgetScope: Stmt<ScopeParams>;
}

/** The prepared statements of SqliteAcuIndex (scope parameters are always tenant, agent, user). */
export function prepareAcuStatements(db: Database): AcuStatements {
  return {
    // The WHERE on the update refuses to move an id to another user (a cross-user leak otherwise).
    upsert: db.prepare<unknown[], { rid: number }>(
      `INSERT INTO acu_items (id, tenant_id, agent_id, user_id, text, embedding, turn_refs, session_id, valid_at, created_at, content_hash, gen)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET text = excluded.text, embedding = excluded.embedding, turn_refs = excluded.turn_refs,
         session_id = excluded.session_id, valid_at = excluded.valid_at, created_at = excluded.created_at,
         content_hash = excluded.content_hash, gen = excluded.gen
       WHERE tenant_id = excluded.tenant_id AND agent_id = excluded.agent_id AND user_id = excluded.user_id
       RETURNING rid`,
    ),
    ftsDelete: db.prepare<[number]>('DELETE FROM acu_fts WHERE rowid = ?'),
    ftsInsert: db.prepare<[number, string, string]>('INSERT INTO acu_fts (rowid, sk, text) VALUES (?, ?, ?)'),
    version: db.prepare<ScopeParams, { version: number; since: number }>('SELECT version, since FROM acu_scopes WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
    nextGeneration: db.prepare<[], { value: number }>('UPDATE acu_generation SET value = value + 1 WHERE id = 1 RETURNING value'),
    stamp: db.prepare<[...ScopeParams, number, number]>(
      // `since` is the generation the user's rows started at: a forget followed by new writes
      // changes it, which tells a cache holding the forgotten rows to reload rather than patch.
      `INSERT INTO acu_scopes (tenant_id, agent_id, user_id, version, since) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, agent_id, user_id) DO UPDATE SET version = excluded.version`,
    ),
    vectors: db.prepare<ScopeParams, VectorRow>('SELECT rid, embedding FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ? ORDER BY rid'),
    vectorsSince: db.prepare<[...ScopeParams, number], VectorRow>('SELECT rid, embedding FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ? AND gen > ? ORDER BY rid'),
    byRid: db.prepare<[number], AcuRow>('SELECT * FROM acu_items WHERE rid = ?'),
    // Column weights: the scope token scores nothing, only the text ranks.
    keyword: db.prepare<[string, number], AcuRow & { score: number }>(
      `SELECT a.*, bm25(acu_fts, 0.0, 1.0) AS score
       FROM acu_fts JOIN acu_items a ON a.rid = acu_fts.rowid
       WHERE acu_fts MATCH ? ORDER BY score LIMIT ?`,
    ),
    count: db.prepare<ScopeParams, { n: number }>('SELECT COUNT(*) AS n FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
    forgetFts: db.prepare<ScopeParams>('DELETE FROM acu_fts WHERE rowid IN (SELECT rid FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ?)'),
    forgetItems: db.prepare<ScopeParams>('DELETE FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
    forgetScope: db.prepare<ScopeParams>('DELETE FROM acu_scopes WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
  };
}
