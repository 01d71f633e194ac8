import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { MemgateError } from '../../core/errors.ts';
import { DEFAULT_CHECKPOINTER, WalCheckpointer, type CheckpointerOptions } from './checkpointer.ts';
import { migrate } from './migrations.ts';

/** A better-sqlite3 connection; one is shared by every SQLite adapter of a process. */
export type Database = BetterSqlite3.Database;

/** How long a writer waits for another connection's lock before SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5_000;

/** SQLite's own default, restored if the checkpointer thread dies. */
const AUTO_CHECKPOINT_PAGES = 1_000;

/** Options of `openSqlite`. */
export interface SqliteOptions {
  /** WAL checkpoints on a worker thread (file databases only); `false` leaves them to SQLite's auto-checkpoint. */
  checkpointer?: false | Partial<CheckpointerOptions>;
}

const closeHooks = new WeakMap<Database, Array<() => void>>();
const checkpointers = new WeakMap<Database, WalCheckpointer>();

/** Largest part of the database file read through a memory map. */
const MMAP_BYTES = 256 * 1024 * 1024;

/**
 * Open (creating it and its parent directory if needed) the one SQLite file that
 * holds every embedded table, tuned for the append path, with all migrations run.
 * `:memory:` gives a private in-memory database (tests).
 *
 * The opener owns the connection: adapters built on it never close it, so the
 * composition root closes it once, after every adapter's `close()`.
 */
export function openSqlite(path: string, options: SqliteOptions = {}): Database {
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
  // Reads of the main file through a memory map: a session start reads a ~16 KB context blob
  // (four overflow pages), which read()-ing page by page made ~100 µs per start; mapped, ~35 µs
  // (500 users, random order, .tmp-style micro-benchmark). Appends only write (to the WAL) and
  // are unaffected. Address space only: pages are the OS page cache's, mapped on first touch.
  // Not set on purpose: cache_size (barely helped reads) and a smaller page_size (page_size
  // 1024 made appends 50% slower).
  if (!inMemory) db.pragma(`mmap_size = ${MMAP_BYTES}`);
  migrate(db);
  if (!inMemory && options.checkpointer !== false) startCheckpointer(db, path, { ...DEFAULT_CHECKPOINTER, ...options.checkpointer });
  return db;
}

/**
 * Run `hook` when `db.close()` is called, before the connection closes (last
 * registered runs first). Adapters use it to commit what they hold and the
 * checkpointer to stop, without the composition root knowing about either.
 */
export function onClose(db: Database, hook: () => void): void {
  let hooks = closeHooks.get(db);
  if (!hooks) {
    const registered: Array<() => void> = [];
    hooks = registered;
    closeHooks.set(db, registered);
    const close = db.close.bind(db);
    db.close = () => {
      try {
        if (db.open) for (const h of registered.splice(0).reverse()) h();
      } finally {
        close();
      }
      return db;
    };
  }
  hooks.push(hook);
}

/** The checkpointer thread of `db`, if it has one (tests: it must exit with the connection). */
export function checkpointerOf(db: Database): WalCheckpointer | undefined {
  return checkpointers.get(db);
}

function startCheckpointer(db: Database, path: string, options: CheckpointerOptions): void {
  const checkpointer = new WalCheckpointer(path, options, () => {
    // Without the thread, SQLite's auto-checkpoint on commit is the only thing that bounds the WAL.
    if (db.open) db.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
  });
  db.pragma('wal_autocheckpoint = 0');
  checkpointers.set(db, checkpointer);
  onClose(db, () => void checkpointer.stop());
}
