import { rmSync } from 'node:fs';

/**
 * Remove a test's temporary directory. A closed SQLite database's checkpointer thread
 * closes its own connection a moment after `db.close()` returns, and SQLite deletes the
 * `-wal`/`-shm` files then; a plain recursive rm racing it fails with ENOTEMPTY (seen in
 * CI). Node retries ENOTEMPTY/EBUSY when asked to; on a loaded machine even ~3 s of retries
 * ran out once (CI, a test whose assertions had passed), so a directory still busy then is
 * removed a few seconds later instead of failing the test: cleanup is not what it tests.
 */
export function removeDir(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  } catch {
    setTimeout(() => {
      try {
        rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      } catch {
        // Left in the OS temp dir: harmless, and never a reason for a test to fail.
      }
    }, 5_000).unref();
  }
}
