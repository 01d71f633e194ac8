import type BetterSqlite3 from 'better-sqlite3';
import type { AcuRow } from './acu-row.ts';
import type { Database } from './database.ts';

type ScopeParams = [tenantId: string, agentId: string, userId: string];
type Stmt<P extends unknown[], R = unknown> = BetterSqlite3.Statement<P, R>;

/** The prepared statements of SqliteAcuIndex, spelled out so the declaration build can name them. */
export interface AcuStatements {
  upsert: Stmt<unknown[], { rid: number }>;
  previous: Stmt<[string], { rid: number; bytes: number }>;
  ftsDelete: Stmt<[number]>;
  ftsInsert: Stmt<[number, string, string]>;
  firstBytes: Stmt<ScopeParams, { bytes: number }>;
  byRids: Stmt<[string], AcuRow>;
  vectorsOf: Stmt<[string], { rid: number; embedding: Buffer }>;
  vectorsOfUser: Stmt<[...ScopeParams, number], { rid: number; embedding: Buffer }>;
  keyword: Stmt<[string, number], AcuRow & { score: number }>;
  count: Stmt<ScopeParams, { n: number }>;
  coded: Stmt<ScopeParams, { rid: number; bytes: number }>;
  forgetFts: Stmt<ScopeParams>;
  forgetItems: Stmt<ScopeParams>;
  forgetScope: Stmt<ScopeParams>;
}

/** The prepared statements of SqliteAcuIndex (scope parameters are always tenant, agent, user). */
export function prepareAcuStatements(db: Database): AcuStatements {
  return {
    // The WHERE on the update refuses to move an id to another user (a cross-user leak otherwise).
    upsert: db.prepare<unknown[], { rid: number }>(
      `INSERT INTO acu_items (id, tenant_id, agent_id, user_id, text, embedding, turn_refs, session_id, valid_at, created_at, content_hash)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET text = excluded.text, embedding = excluded.embedding, turn_refs = excluded.turn_refs,
         session_id = excluded.session_id, valid_at = excluded.valid_at, created_at = excluded.created_at,
         content_hash = excluded.content_hash
       WHERE tenant_id = excluded.tenant_id AND agent_id = excluded.agent_id AND user_id = excluded.user_id
       RETURNING rid`,
    ),
    previous: db.prepare<[string], { rid: number; bytes: number }>('SELECT rid, length(embedding) AS bytes FROM acu_items WHERE id = ?'),
    ftsDelete: db.prepare<[number]>('DELETE FROM acu_fts WHERE rowid = ?'),
    ftsInsert: db.prepare<[number, string, string]>('INSERT INTO acu_fts (rowid, sk, text) VALUES (?, ?, ?)'),
    // The user's first row sets the vector size when the embedder's is not configured.
    firstBytes: db.prepare<ScopeParams, { bytes: number }>('SELECT length(embedding) AS bytes FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ? ORDER BY rid LIMIT 1'),
    byRids: db.prepare<[string], AcuRow>('SELECT * FROM acu_items WHERE rid IN (SELECT value FROM json_each(?))'),
    vectorsOf: db.prepare<[string], { rid: number; embedding: Buffer }>('SELECT rid, embedding FROM acu_items WHERE rid IN (SELECT value FROM json_each(?))'),
    vectorsOfUser: db.prepare<[...ScopeParams, number], { rid: number; embedding: Buffer }>(
      'SELECT rid, embedding FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ? AND length(embedding) = ?',
    ),
    // Column weights: the scope token scores nothing, only the text ranks.
    keyword: db.prepare<[string, number], AcuRow & { score: number }>(
      `SELECT a.*, bm25(acu_fts, 0.0, 1.0) AS score
       FROM acu_fts JOIN acu_items a ON a.rid = acu_fts.rowid
       WHERE acu_fts MATCH ? ORDER BY score LIMIT ?`,
    ),
    count: db.prepare<ScopeParams, { n: number }>('SELECT COUNT(*) AS n FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
    coded: db.prepare<ScopeParams, { rid: number; bytes: number }>('SELECT rid, length(embedding) AS bytes FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
    forgetFts: db.prepare<ScopeParams>('DELETE FROM acu_fts WHERE rowid IN (SELECT rid FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ?)'),
    forgetItems: db.prepare<ScopeParams>('DELETE FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
    // acu_scopes held the write generations of the vector cache the vector engine replaced; rows of older files go with their user.
    forgetScope: db.prepare<ScopeParams>('DELETE FROM acu_scopes WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
  };
}
