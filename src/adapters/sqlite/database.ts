import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { MemgateError } from '../../core/errors.ts';
import { migrate } from './migrations.ts';

/** A better-sqlite3 connection; one is shared by every SQLite adapter of a process. */
export type Database = BetterSqlite3.Database;

/** How long a writer waits for another connection's lock before SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * Open (creating it and its parent directory if needed) the one SQLite file that
 * holds every embedded table, tuned for the append path, with all migrations run.
 * `:memory:` gives a private in-memory database (tests).
 *
 * The opener owns the connection: adapters built on it never close it, so the
 * composition root closes it once, after every adapter's `close()`.
 */
export function openSqlite(path: string): Database {
  const inMemory = path === ':memory:' || path === '';
  if (!inMemory) mkdirSync(dirname(path), { recursive: true });
  let db: Database;
  try {
    db = new BetterSqlite3(path, { timeout: BUSY_TIMEOUT_MS });
  } catch (err) {
    throw new MemgateError('unavailable', `cannot open SQLite database at ${path}`, { cause: err, retryable: false });
  }
  // WAL: readers never block the appending writer, and a commit is one sequential log write.
  db.pragma('journal_mode = WAL');
  // NORMAL under WAL syncs at checkpoints, not at every commit. A committed transaction is
  // already in the WAL file (the OS page cache), so it survives a crash or kill of the
  // process: that is the "an acked turn survives a gateway crash" requirement. Only a power
  // loss or kernel panic can drop the last commits; surviving that needs `synchronous = FULL`
  // (an fsync per append), which costs the append path milliseconds on ordinary disks.
  db.pragma('synchronous = NORMAL');
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma('temp_store = MEMORY');
  migrate(db);
  return db;
}
