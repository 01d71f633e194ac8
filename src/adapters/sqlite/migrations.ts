import type BetterSqlite3 from 'better-sqlite3';
import { backfillAcuCodes, backfillVectorTables, loadVectorExtension } from './vector-tables.ts';

// The connection type straight from the driver: database.ts runs migrate(), so importing its alias would be a cycle.
type Database = BetterSqlite3.Database;

/**
 * DDL of every SQLite adapter, one entry per adapter. All statements are
 * idempotent (IF NOT EXISTS), so running them on every open is the migration.
 * A future column change bumps `SCHEMA_VERSION` and adds an ALTER step keyed on
 * `PRAGMA user_version`.
 */
const MIGRATIONS: Readonly<Record<string, string>> = {
  turnBuffer: `
    -- One row per agent+user: integer key for the other tables, seq and token counters (O(1) pendingTokens).
    CREATE TABLE IF NOT EXISTS tb_users (
      uid INTEGER PRIMARY KEY,
      tenant_id TEXT NOT NULL, agent_id TEXT NOT NULL, user_id TEXT NOT NULL,
      last_seq INTEGER NOT NULL DEFAULT 0,
      pending_tokens INTEGER NOT NULL DEFAULT 0,
      UNIQUE (tenant_id, agent_id, user_id)
    );
    CREATE TABLE IF NOT EXISTS tb_turns (
      uid INTEGER NOT NULL, seq INTEGER NOT NULL,
      turn_id TEXT NOT NULL, session_id TEXT NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL,
      ts INTEGER NOT NULL, received_at INTEGER NOT NULL, tokens INTEGER NOT NULL,
      speaker TEXT, asr_confidence REAL, interrupted INTEGER,
      PRIMARY KEY (uid, seq)
    ) WITHOUT ROWID;
    -- Idempotency keys outlive the turn: \`removed\` holds the turn as JSON once it left the buffer.
    CREATE TABLE IF NOT EXISTS tb_ids (
      uid INTEGER NOT NULL, turn_id TEXT NOT NULL, seq INTEGER NOT NULL, removed TEXT,
      PRIMARY KEY (uid, turn_id)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS tb_sessions (
      tenant_id TEXT NOT NULL, session_id TEXT NOT NULL,
      agent_id TEXT NOT NULL, user_id TEXT NOT NULL,
      started_at INTEGER NOT NULL, ended_at INTEGER,
      generation INTEGER NOT NULL DEFAULT 1,
      PRIMARY KEY (tenant_id, session_id)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS tb_sessions_user ON tb_sessions (tenant_id, agent_id, user_id);
    -- Gateway leases: the WebSocket calls a gateway holds (tb_sessions.holder) stand until \`until\`.
    CREATE TABLE IF NOT EXISTS tb_leases (holder TEXT PRIMARY KEY, until INTEGER NOT NULL) WITHOUT ROWID;
  `,
  contextCache: `
    CREATE TABLE IF NOT EXISTS cc_contexts (
      tenant_id TEXT NOT NULL, agent_id TEXT NOT NULL, user_id TEXT NOT NULL,
      body BLOB NOT NULL,
      PRIMARY KEY (tenant_id, agent_id, user_id)
    ) WITHOUT ROWID;
  `,
  documentStore: `
    CREATE TABLE IF NOT EXISTS ds_hot (
      tenant_id TEXT NOT NULL, agent_id TEXT NOT NULL, user_id TEXT NOT NULL,
      version INTEGER NOT NULL, body BLOB NOT NULL,
      PRIMARY KEY (tenant_id, agent_id, user_id)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS ds_schemas (
      tenant_id TEXT NOT NULL, agent_id TEXT NOT NULL, body TEXT NOT NULL,
      PRIMARY KEY (tenant_id, agent_id)
    ) WITHOUT ROWID;
  `,
  coldArchive: `
    CREATE TABLE IF NOT EXISTS ca_turns (
      id INTEGER PRIMARY KEY,
      tenant_id TEXT NOT NULL, agent_id TEXT NOT NULL, user_id TEXT NOT NULL,
      turn_id TEXT NOT NULL, body TEXT NOT NULL,
      UNIQUE (tenant_id, agent_id, user_id, turn_id)
    );
    -- rowid = ca_turns.id; \`sk\` is a per-user token so MATCH intersects with one user's postings.
    CREATE VIRTUAL TABLE IF NOT EXISTS ca_fts USING fts5 (
      sk, text, tokenize = 'unicode61 remove_diacritics 2'
    );
  `,
  acuIndex: `
    CREATE TABLE IF NOT EXISTS acu_items (
      rid INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      tenant_id TEXT NOT NULL, agent_id TEXT NOT NULL, user_id TEXT NOT NULL,
      text TEXT NOT NULL, embedding BLOB NOT NULL, turn_refs TEXT NOT NULL,
      session_id TEXT NOT NULL, valid_at TEXT NOT NULL, created_at TEXT NOT NULL, content_hash TEXT NOT NULL,
      gen INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX IF NOT EXISTS acu_items_scope ON acu_items (tenant_id, agent_id, user_id);
    -- Write stamps of each user's ACUs (schema 2 and again from schema 4; schema 3 did not write
    -- them): the in-memory binary codes of SqliteAcuIndex are checked against them on every search.
    -- acu_generation is the counter the stamps are drawn from; acu_items.gen is no longer written.
    CREATE TABLE IF NOT EXISTS acu_generation (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL);
    INSERT OR IGNORE INTO acu_generation (id, value) VALUES (1, 0);
    CREATE TABLE IF NOT EXISTS acu_scopes (
      tenant_id TEXT NOT NULL, agent_id TEXT NOT NULL, user_id TEXT NOT NULL, version INTEGER NOT NULL,
      since INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (tenant_id, agent_id, user_id)
    ) WITHOUT ROWID;
    CREATE VIRTUAL TABLE IF NOT EXISTS acu_fts USING fts5 (
      sk, text, tokenize = 'unicode61 remove_diacritics 2'
    );
    -- Each row's sign-bit code again, clustered by user (schema 6): loading one user's codes is a
    -- range read of that user's entries. vec0 answers \`WHERE sk = ?\` only by scanning every
    -- user's codes (184 ms for 10 codes beside another user's 100k); it keeps serving the KNN.
    CREATE TABLE IF NOT EXISTS acu_codes (
      tenant_id TEXT NOT NULL, agent_id TEXT NOT NULL, user_id TEXT NOT NULL, rid INTEGER NOT NULL, code BLOB NOT NULL,
      PRIMARY KEY (tenant_id, agent_id, user_id, rid)
    ) WITHOUT ROWID;
  `,
};

/** Bumped when a migration needs more than CREATE IF NOT EXISTS. */
export const SCHEMA_VERSION = 6;

const migrated = new WeakSet<Database>();

/** Create every adapter's tables on `db` (once per connection; later calls are free). */
export function migrate(db: Database): void {
  if (migrated.has(db)) return;
  loadVectorExtension(db);
  // IMMEDIATE: take the write lock up front, waiting out busy_timeout. A deferred transaction that
  // reads the schema and then writes fails at once ("database is locked") when another process
  // (gateway, worker) committed in between, so opening a shared file while it is written would fail.
  db.transaction(() => {
    for (const ddl of Object.values(MIGRATIONS)) db.exec(ddl);
    addColumnIfMissing(db, 'acu_items', 'gen', 'INTEGER NOT NULL DEFAULT 0');
    addColumnIfMissing(db, 'acu_scopes', 'since', 'INTEGER NOT NULL DEFAULT 0');
    // Schema 2's index for its vector cache: nothing reads it since schema 3, and every ACU write paid for it.
    db.exec('DROP INDEX IF EXISTS acu_items_gen');
    // Version 3: the vector engine's per-dimension vec0 tables, filled from the stored vectors.
    backfillVectorTables(db);
    // Version 4: the in-memory codes are checked against acu_scopes again, which schema 3 left
    // stale; a new generation for every user with rows makes any earlier stamp moot.
    if ((db.pragma('user_version', { simple: true }) as number) < 4) restampAcuScopes(db);
    addColumnIfMissing(db, 'tb_sessions', 'generation', 'INTEGER NOT NULL DEFAULT 1');
    // Version 5: who holds a live call's socket, and when a dropped call is due to end (the sweep's two reads).
    addColumnIfMissing(db, 'tb_sessions', 'holder', 'TEXT');
    addColumnIfMissing(db, 'tb_sessions', 'due_at', 'INTEGER');
    db.exec('CREATE INDEX IF NOT EXISTS tb_sessions_held ON tb_sessions (holder) WHERE holder IS NOT NULL AND ended_at IS NULL');
    db.exec('CREATE INDEX IF NOT EXISTS tb_sessions_due ON tb_sessions (due_at) WHERE due_at IS NOT NULL AND ended_at IS NULL');
    // Version 6: the per-user copy of the codes, filled from the stored vectors.
    backfillAcuCodes(db);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
  migrated.add(db);
}

/** Give every user with ACU rows a fresh write stamp (one generation for all: a reader holds no codes yet). */
function restampAcuScopes(db: Database): void {
  const gen = db.prepare<[], { value: number }>('UPDATE acu_generation SET value = value + 1 WHERE id = 1 RETURNING value').get()!.value;
  db.prepare<[number, number]>(
    `INSERT INTO acu_scopes (tenant_id, agent_id, user_id, version, since) SELECT DISTINCT tenant_id, agent_id, user_id, ?, ? FROM acu_items WHERE true
     ON CONFLICT (tenant_id, agent_id, user_id) DO UPDATE SET version = excluded.version, since = excluded.since`,
  ).run(gen, gen);
}

/** Versions 2, 3 and 5 added columns; files made by earlier versions get them here. */
function addColumnIfMissing(db: Database, table: string, column: string, decl: string): void {
  const columns = db.pragma(`table_info(${table})`) as Array<{ name: string }>;
  if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${decl}`);
}
