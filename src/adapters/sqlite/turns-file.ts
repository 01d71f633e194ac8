import { existsSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { Database } from './database.ts';

/**
 * The turn buffer and the sessions live in a file of their own, beside the one every
 * other embedded store shares (memgate.db → memgate.turns.db).
 *
 * Why two files: SQLite has one write lock per file. The extraction thread writes
 * ACUs, cold turns and hot documents in short transactions many times a second;
 * when they shared the append's file, an append that met one waited for it. At
 * 1,000 turns/s with the lane working (hashing embedder, 2 cores), 3–6 % of the
 * append commits waited over 1 ms and the commit p99 was 2–4 ms against 0.2 ms
 * with the lane off; with the turns in their own file the commit p99 was 0.5–0.6 ms
 * (bench `append-extraction`). The lane still writes here, but only to remove
 * the turns a run committed.
 */
export function turnsFileOf(path: string): string {
  if (path === ':memory:' || path === '') return path;
  const ext = extname(path);
  return join(dirname(path), `${basename(path, ext)}.turns${ext || '.db'}`);
}

/** The tables of the turns file, parents first (tb_turns and tb_ids carry tb_users' uid). */
const TURN_TABLES = ['tb_users', 'tb_turns', 'tb_ids', 'tb_sessions', 'tb_leases'] as const;

/**
 * Move the turn tables' rows from `mainPath` (a file written before the split, where
 * they lived beside everything else) into `turns`, once. Idempotent and safe to cut
 * short: rows are copied with INSERT OR IGNORE (same keys, so a second pass adds
 * nothing), and deleted from the old file only after the copy committed. Only the
 * opener that owns both files calls it, before any append.
 */
export function moveTurnTables(turns: Database, mainPath: string): { moved: number } {
  if (mainPath === ':memory:' || mainPath === '' || !existsSync(mainPath)) return { moved: 0 };
  turns.prepare('ATTACH DATABASE ? AS old').run(mainPath);
  try {
    const pending = TURN_TABLES.some((t) => turns.prepare(`SELECT 1 FROM old.${t} LIMIT 1`).get() !== undefined);
    if (!pending) return { moved: 0 };
    let moved = 0;
    // Two transactions, the copy first: under WAL a transaction over two files is atomic per file
    // only, and the old rows must never be gone while their copy is not committed.
    turns
      .transaction(() => {
        for (const table of TURN_TABLES) {
          const columns = (turns.pragma(`main.table_info(${table})`) as Array<{ name: string }>).map((c) => c.name).join(', ');
          moved += turns.prepare(`INSERT OR IGNORE INTO main.${table} (${columns}) SELECT ${columns} FROM old.${table}`).run().changes;
        }
      })
      .immediate();
    turns.transaction(() => {
      for (const table of [...TURN_TABLES].reverse()) turns.prepare(`DELETE FROM old.${table}`).run();
    })();
    return { moved };
  } finally {
    turns.prepare('DETACH DATABASE old').run();
  }
}
