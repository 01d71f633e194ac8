/** The embedded (no server) storage adapters: the turn buffer's SQLite file and one shared by the rest. */
export { openSqlite, type Database } from './database.ts';
export { migrate, SCHEMA_VERSION } from './migrations.ts';
export { SqliteTurnBuffer } from './turn-buffer.ts';
export { SqliteContextCache } from './context-cache.ts';
export { SqliteDocumentStore } from './document-store.ts';
export { SqliteColdArchive } from './cold-archive.ts';
export { SqliteAcuIndex, type SqliteAcuIndexOptions } from './acu-index.ts';
export { moveTurnTables, turnsFileOf } from './turns-file.ts';
