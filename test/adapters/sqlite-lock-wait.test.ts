/**
 * The turn append waits for another connection's write lock by polling, not with SQLite's
 * coarse busy sleeps (src/adapters/sqlite/group-commit.ts): here a second connection, on a
 * worker thread, holds the lock while the append is made, and the append commits after it.
 */
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, expect, it } from 'vitest';
import { openSqlite } from '../../src/adapters/sqlite/index.ts';
import { GroupCommit } from '../../src/adapters/sqlite/group-commit.ts';
import { removeDir } from '../support/tmp.ts';

const dir = mkdtempSync(join(tmpdir(), 'memgate-lock-wait-'));
afterAll(() => removeDir(dir));

// The other writer: takes the write lock, says so, holds it ~80 ms, writes its row, commits.
const HOLDER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.exec('BEGIN IMMEDIATE');
parentPort.postMessage('locked');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 80);
db.prepare('INSERT INTO t (who) VALUES (?)').run('holder');
db.exec('COMMIT');
db.close();
parentPort.postMessage('released');
`;

it('an append made while another connection holds the write lock commits after it, without an error', async () => {
  const path = join(dir, 'lock.db');
  const db = openSqlite(path);
  try {
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, who TEXT NOT NULL)');
    const append = new GroupCommit(db, (who: string) => Number(db.prepare('INSERT INTO t (who) VALUES (?)').run(who).lastInsertRowid));
    const worker = new Worker(HOLDER, { eval: true, workerData: { path, driver: createRequire(import.meta.url).resolve('better-sqlite3') } });
    const messages: string[] = [];
    const released = new Promise<void>((resolve, reject) => {
      worker.on('message', (m: string) => {
        messages.push(m);
        if (m === 'released') resolve();
      });
      worker.on('error', reject);
    });
    await new Promise<void>((resolve) => worker.once('message', () => resolve()));
    expect(messages).toEqual(['locked']);
    const id = await append.run('gateway');
    await released;
    await worker.terminate();
    // The append waited for the holder's commit: its row comes second.
    expect(db.prepare('SELECT who FROM t ORDER BY id').all()).toEqual([{ who: 'holder' }, { who: 'gateway' }]);
    expect(id).toBe(2);
    // The connection's usual busy timeout is back for every other statement.
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
  } finally {
    db.close();
  }
});
