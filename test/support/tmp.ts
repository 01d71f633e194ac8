import { rmSync } from 'node:fs';

/**
 * Remove a test's temporary directory. A closed SQLite database's checkpointer thread
 * closes its own connection a moment after `db.close()` returns, and SQLite deletes the
 * `-wal`/`-shm` files then; a plain recursive rm racing it fails with ENOTEMPTY (seen in
 * CI). Node retries ENOTEMPTY/EBUSY when asked to.
 */
export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
}
