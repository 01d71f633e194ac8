import type BetterSqlite3 from 'better-sqlite3';
import type { AcuRow } from './acu-row.ts';
import type { Database } from './database.ts';

type ScopeParams = [tenantId: string, agentId: string, userId: string];
type Stmt<P extends unknown[], R = unknown> = BetterSqlite3.Statement<P, R>;

/** The prepared statements of SqliteAcuIndex, spelled out so the declaration build can name them. */
export interface AcuStatements {
  upsert: Stmt<unknown[], { rid: number }>;
  previous: Stmt<[string], { rid: number; embedding: Buffer }>;
  stamp: Stmt<[...ScopeParams, ...ScopeParams], { maxRid: number | null; version: number | null; since: number | null }>;
  nextGeneration: Stmt<[], { value: number }>;
  writeStamp: Stmt<[...ScopeParams, number, number, number]>;
  vectorsSince: Stmt<[...ScopeParams, number, number], { rid: number; embedding: Buffer }>;
  ftsDelete: Stmt<[number]>;
  ftsInsert: Stmt<[number, string, string]>;
  firstBytes: Stmt<ScopeParams, { bytes: number }>;
  byRids: Stmt<[string], AcuRow>;
  vectorsOf: Stmt<[string], { rid: number; embedding: Buffer }>;
  vectorsOfUser: Stmt<[...ScopeParams, number], { rid: number; embedding: Buffer }>;
  keyword: Stmt<[string, number], AcuRow & { score: number }>;
  count: Stmt<ScopeParams, { n: number }>;
  coded: Stmt<ScopeParams, { rid: number; bytes: number }>;
  /** One user's codes of one size, in rid order (acu_codes: a range read of that user's entries). */
  codesOfUser: Stmt<[...ScopeParams, number], { rid: number; code: Buffer }>;
  putCode: Stmt<[...ScopeParams, number, Buffer]>;
  forgetCodes: Stmt<ScopeParams>;
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
    // The old vector too: an upsert that changes a row's code in place tells cached codes to reload.
    previous: db.prepare<[string], { rid: number; embedding: Buffer }>('SELECT rid, embedding FROM acu_items WHERE id = ?'),
    // A user's write stamp (what cached codes are checked against on every search): the newest
    // row (an index seek: rid ends every acu_items_scope entry) and the generations of acu_scopes.
    stamp: db.prepare<[...ScopeParams, ...ScopeParams], { maxRid: number | null; version: number | null; since: number | null }>(
      `SELECT (SELECT MAX(rid) FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ?) AS maxRid, s.version AS version, s.since AS since
       FROM (SELECT 1) LEFT JOIN acu_scopes s ON s.tenant_id = ? AND s.agent_id = ? AND s.user_id = ?`,
    ),
    nextGeneration: db.prepare<[], { value: number }>('UPDATE acu_generation SET value = value + 1 WHERE id = 1 RETURNING value'),
    // version: the generation of the user's last write; since: of the last write that rewrote a code
    // in place, or of the user's first write (after a forget too): cached codes older than it reload.
    writeStamp: db.prepare<[...ScopeParams, number, number, number]>(
      `INSERT INTO acu_scopes (tenant_id, agent_id, user_id, version, since) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, agent_id, user_id) DO UPDATE SET version = excluded.version,
         since = CASE WHEN ? THEN excluded.since ELSE acu_scopes.since END`,
    ),
    // Rows written after cached codes were read (a seek on acu_items_scope, whose entries end in rid).
    vectorsSince: db.prepare<[...ScopeParams, number, number], { rid: number; embedding: Buffer }>(
      'SELECT rid, embedding FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ? AND rid > ? AND length(embedding) = ? ORDER BY rid',
    ),
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
    codesOfUser: db.prepare<[...ScopeParams, number], { rid: number; code: Buffer }>('SELECT rid, code FROM acu_codes WHERE tenant_id = ? AND agent_id = ? AND user_id = ? AND length(code) = ?'),
    putCode: db.prepare<[...ScopeParams, number, Buffer]>('INSERT OR REPLACE INTO acu_codes (tenant_id, agent_id, user_id, rid, code) VALUES (?, ?, ?, ?, ?)'),
    forgetCodes: db.prepare<ScopeParams>('DELETE FROM acu_codes WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
    forgetFts: db.prepare<ScopeParams>('DELETE FROM acu_fts WHERE rowid IN (SELECT rid FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ?)'),
    forgetItems: db.prepare<ScopeParams>('DELETE FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
    // The user's write stamp goes with the rows: the next write starts a new `since`.
    forgetScope: db.prepare<ScopeParams>('DELETE FROM acu_scopes WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
  };
}
