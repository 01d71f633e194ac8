/**
 * The embedded default keeps the turn buffer in a file of its own (src/adapters/sqlite/turns-file.ts),
 * so an append never waits for the extraction lane's writes to the shared file; a file written
 * before the split has its buffered turns, idempotency keys and sessions moved over at start.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, expect, it } from 'vitest';
import { moveTurnTables, openSqlite, SqliteTurnBuffer, turnsFileOf } from '../../src/adapters/sqlite/index.ts';
import { createLogger } from '../../src/core/logger.ts';
import { createRuntime } from '../../src/app/wiring.ts';
import { testConfig } from '../support/config.ts';
import { removeDir } from '../support/tmp.ts';

const dir = mkdtempSync(join(tmpdir(), 'memgate-turns-file-'));
afterAll(() => removeDir(dir));

const scope = { tenantId: 'default', agentId: 'a-1', userId: 'u-1' };
const turn = (turnId: string, text: string) => ({ role: 'user' as const, text, turnId, sessionId: 's-1', ts: 1_700_000_000_000, receivedAt: 1_700_000_000_000, tokens: 8 });
const rows = (path: string, table: string) => {
  const db = openSqlite(path, { checkpointer: false });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
};

// Another writer of the shared file (the extraction thread's place): takes its write lock and holds it until told.
const HOLDER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.exec('BEGIN IMMEDIATE');
parentPort.postMessage('locked');
parentPort.once('message', () => {
  db.exec('COMMIT');
  db.close();
  parentPort.postMessage('released');
});
`;

it('names the turns file beside the shared one', () => {
  expect(turnsFileOf('./data/memgate.db')).toBe('data/memgate.turns.db');
  expect(turnsFileOf('/x/store')).toBe('/x/store.turns.db');
  expect(turnsFileOf(':memory:')).toBe(':memory:');
});

it('an append commits while another connection holds the shared file’s write lock', async () => {
  const path = join(dir, 'lock', 'memgate.db');
  const runtime = await createRuntime(testConfig({ sqlite: { path }, server: { inlineWorkers: false } }), { logger: createLogger('silent') });
  const worker = new Worker(HOLDER, { eval: true, workerData: { path, driver: createRequire(import.meta.url).resolve('better-sqlite3') } });
  try {
    const messages: string[] = [];
    worker.on('message', (m: string) => messages.push(m));
    await new Promise<void>((resolve) => worker.once('message', () => resolve()));
    const ack = await runtime.service.appendTurn(scope, 's-1', { role: 'user', text: 'My budget is 70 lakhs.', turnId: 't-1' });
    // Acked and readable with the shared file still locked: the append never touched it.
    expect(ack).toMatchObject({ turnId: 't-1', seq: 1, duplicate: false });
    expect((await runtime.service.bufferedTurns(scope)).map((t) => t.text)).toEqual(['My budget is 70 lakhs.']);
    expect(messages).toEqual(['locked']);
    const released = new Promise<void>((resolve) => worker.once('message', () => resolve()));
    worker.postMessage('commit');
    await released;
  } finally {
    await worker.terminate();
    await runtime.close();
  }
  expect(rows(turnsFileOf(path), 'tb_turns')).toBe(1);
  expect(rows(path, 'tb_turns')).toBe(0);
});

it('a file written before the split: buffered turns, idempotency keys and sessions move to the turns file at start, once', async () => {
  const path = join(dir, 'old', 'memgate.db');
  // The old layout: the buffer's tables in the shared file.
  const old = openSqlite(path);
  const buffer = new SqliteTurnBuffer(old);
  await buffer.openSession({ sessionId: 's-1', scope, startedAt: 1_700_000_000_000, endedAt: null });
  await buffer.append(scope, 's-1', turn('t-1', 'My name is Dev Patel.'));
  await buffer.append(scope, 's-1', turn('t-2', 'My budget is 70 lakhs.'));
  await buffer.remove(scope, ['t-1']); // extracted: its key keeps the turn
  await buffer.close();
  old.close();
  expect(existsSync(turnsFileOf(path))).toBe(false);

  for (const start of [1, 2]) {
    const runtime = await createRuntime(testConfig({ sqlite: { path }, server: { inlineWorkers: false } }), { logger: createLogger('silent') });
    try {
      expect(
        (await runtime.service.bufferedTurns(scope)).map((t) => [t.turnId, t.seq, t.text]),
        `start ${start}`,
      ).toEqual([['t-2', 2, 'My budget is 70 lakhs.']]);
      expect(await runtime.service.session('default', 's-1')).toMatchObject({ sessionId: 's-1', endedAt: null });
      // The removed turn's key came along: a late re-send is its duplicate, and seqs go on.
      expect(await runtime.service.appendTurn(scope, 's-1', { role: 'user', text: 'My name is Dev Patel.', turnId: 't-1' })).toMatchObject({ seq: 1, duplicate: true });
    } finally {
      await runtime.close();
    }
  }
  expect(rows(path, 'tb_turns') + rows(path, 'tb_ids') + rows(path, 'tb_sessions') + rows(path, 'tb_users')).toBe(0);
  expect(rows(turnsFileOf(path), 'tb_ids')).toBe(2);
  // Nothing left to move: a third pass is a no-op.
  const turns = openSqlite(turnsFileOf(path), { checkpointer: false });
  try {
    expect(moveTurnTables(turns, path)).toEqual({ moved: 0 });
  } finally {
    turns.close();
  }
});
