import { closeSync, existsSync, mkdtempSync, openSync, readSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WalCheckpointer, DEFAULT_CHECKPOINTER } from '../../src/adapters/sqlite/checkpointer.ts';
import { checkpointerOf, openSqlite } from '../../src/adapters/sqlite/database.ts';
import { SqliteTurnBuffer } from '../../src/adapters/sqlite/turn-buffer.ts';
import type { Scope } from '../../src/core/types.ts';
import type { AppendOutcome } from '../../src/ports/turn-buffer.ts';
import { makeTurnInput, randomScope, sibling, type TurnToAppend } from '../support/fixtures.ts';
import { waitFor } from '../support/wait.ts';
import { removeDir } from '../support/tmp.ts';

/**
 * The append path of the embedded turn buffer: group commit (appends from
 * separate callbacks of one event-loop iteration share a transaction) and the
 * WAL checkpointer thread. `await null` stands for "uWS returned to the loop and
 * dispatched the next message": uWS drains microtasks between messages.
 */

const tmp = mkdtempSync(join(tmpdir(), 'memgate-append-'));
afterAll(() => removeDir(tmp));

const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));
const isPromise = (v: unknown): v is Promise<unknown> => v instanceof Promise;

/** Appends `inputs` the way the gateway does under load: one per "callback" of the same loop iteration. */
async function appendAsBurst(buffer: SqliteTurnBuffer, scope: Scope, inputs: TurnToAppend[]) {
  const results: Array<AppendOutcome | Promise<AppendOutcome>> = [];
  for (const input of inputs) {
    results.push(buffer.append(scope, 's-1', input));
    await null;
  }
  return results;
}

/** A fresh buffer on a private `:memory:` database, closed after `fn`. */
function withBuffer<T>(fn: (buffer: SqliteTurnBuffer) => Promise<T>): Promise<T> {
  const db = openSqlite(':memory:');
  return fn(new SqliteTurnBuffer(db)).finally(() => db.close());
}

describe('SqliteTurnBuffer group commit', () => {
  it('commits the first append of an iteration alone and groups the rest, keeping call order and exact counters', () =>
    withBuffer(async (buffer) => {
      await nextTick();
      const scope = randomScope();
      const inputs = Array.from({ length: 5 }, (_, i) => makeTurnInput({ tokens: i + 1 }));
      const results = await appendAsBurst(buffer, scope, inputs);
      expect(results.map(isPromise)).toEqual([false, true, true, true, true]);
      const outcomes = await Promise.all(results);
      expect(outcomes.map((o) => o.turn.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(outcomes.map((o) => o.pendingTokens)).toEqual([1, 3, 6, 10, 15]);
      expect(outcomes.every((o) => !o.duplicate)).toBe(true);
      expect((await buffer.list(scope)).map((t) => t.turnId)).toEqual(inputs.map((t) => t.turnId));
      expect(await buffer.pendingTokens(scope)).toBe(15);
    }));

  it('stays synchronous for a loop in one call stack, however long', () =>
    withBuffer(async (buffer) => {
      const scope = randomScope();
      const outs = Array.from({ length: 50 }, () => buffer.append(scope, 's-1', makeTurnInput()));
      expect(outs.some(isPromise)).toBe(false);
      expect(outs.map((o) => (o as AppendOutcome).turn.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    }));

  it('treats a turnId repeated inside one group as a duplicate of the first, stored and counted once', () =>
    withBuffer(async (buffer) => {
      await nextTick();
      const scope = randomScope();
      const first = makeTurnInput({ turnId: 'same', text: 'original', tokens: 4 });
      const [lead, a, b, c] = await appendAsBurst(buffer, scope, [makeTurnInput({ tokens: 1 }), first, makeTurnInput({ tokens: 2 }), { ...first, text: 'retry', tokens: 9 }]);
      expect(isPromise(a) && isPromise(c)).toBe(true);
      const [, oa, ob, oc] = await Promise.all([lead!, a!, b!, c!]);
      expect(oc).toEqual({ turn: oa!.turn, duplicate: true, pendingTokens: 7 });
      expect(ob!.turn.seq).toBe(3);
      expect((await buffer.list(scope)).map((t) => t.text)).toHaveLength(3);
      expect(await buffer.pendingTokens(scope)).toBe(7);
      // The next append takes the seq after the last stored one: the duplicate gave its seq back.
      expect((await buffer.append(scope, 's-1', makeTurnInput())).turn.seq).toBe(4);
    }));

  it('fails only the bad append of a group; the others commit with contiguous seqs', () =>
    withBuffer(async (buffer) => {
      await nextTick();
      const scope = randomScope();
      const bad = makeTurnInput({ text: { not: 'a string' } as unknown as string, tokens: 5 });
      const good = [makeTurnInput(), makeTurnInput(), makeTurnInput()];
      const results = await appendAsBurst(buffer, scope, [good[0]!, good[1]!, bad, good[2]!]);
      const settled = await Promise.allSettled(results);
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      const listed = await buffer.list(scope);
      expect(listed.map((t) => t.turnId)).toEqual(good.map((t) => t.turnId));
      expect(listed.map((t) => t.seq)).toEqual([1, 2, 3]);
    }));

  it('isolates users within one group: each gets its own seqs', () =>
    withBuffer(async (buffer) => {
      await nextTick();
      const a = randomScope();
      const b = sibling(a);
      const results: Array<AppendOutcome | Promise<AppendOutcome>> = [];
      for (const scope of [a, b, a, b, a]) {
        results.push(buffer.append(scope, 's-1', makeTurnInput()));
        await null;
      }
      expect((await Promise.all(results)).map((o) => o.turn.seq)).toEqual([1, 1, 2, 2, 3]);
    }));

  it('commits an open group before any other operation, so reads see appends made before them', () =>
    withBuffer(async (buffer) => {
      await nextTick();
      const scope = randomScope();
      const [, pending] = await appendAsBurst(buffer, scope, [makeTurnInput({ tokens: 2 }), makeTurnInput({ tokens: 3 })]);
      expect(isPromise(pending)).toBe(true);
      // No await of `pending`: list must still include it, and the append resolves as committed.
      expect(await buffer.list(scope)).toHaveLength(2);
      expect(await buffer.pendingTokens(scope)).toBe(5);
      expect((await pending!).turn.seq).toBe(2);
      // Another operation ended the burst: the next append commits on its own again.
      expect(isPromise(buffer.append(scope, 's-1', makeTurnInput()))).toBe(false);
    }));

  it('groups session opens of one iteration into one commit, visible to every session read', () =>
    withBuffer(async (buffer) => {
      await nextTick();
      const scope = randomScope();
      const opened: Array<Promise<unknown>> = [];
      for (const id of ['s-a', 's-b', 's-c']) {
        opened.push(buffer.openSession({ sessionId: id, scope, startedAt: 1, endedAt: null }));
        await null; // another callback of the same iteration, as uWS dispatches requests
      }
      // Not awaited: a read commits the open group first.
      expect(await buffer.getSession(scope.tenantId, 's-c')).toMatchObject({ sessionId: 's-c', scope });
      await Promise.all(opened);
      await buffer.endSession(scope.tenantId, 's-b', 5);
      expect((await buffer.getSession(scope.tenantId, 's-b'))?.endedAt).toBe(5);
      expect(await buffer.getSession(scope.tenantId, 's-a')).not.toBeNull();
    }));

  it('commits an open group when the database is closed, never dropping an accepted append', async () => {
    const path = join(tmp, 'close-with-group.db');
    const scope = randomScope();
    let db = openSqlite(path);
    await nextTick();
    const results = await appendAsBurst(new SqliteTurnBuffer(db), scope, [makeTurnInput(), makeTurnInput(), makeTurnInput()]);
    db.close();
    expect((await Promise.all(results)).map((o) => o.turn.seq)).toEqual([1, 2, 3]);
    db = openSqlite(path);
    try {
      expect(await new SqliteTurnBuffer(db).list(scope)).toHaveLength(3);
    } finally {
      db.close();
    }
  });
});

describe('WAL checkpointer thread', () => {
  it('runs for a file database with auto-checkpoint off, and exits when the database closes', async () => {
    const db = openSqlite(join(tmp, 'thread.db'));
    const checkpointer = checkpointerOf(db);
    expect(checkpointer).toBeInstanceOf(WalCheckpointer);
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    db.close();
    await expect(checkpointer!.exited).resolves.toBeUndefined();
  });

  it('is absent for :memory: and when disabled (SQLite auto-checkpoints instead)', () => {
    const mem = openSqlite(':memory:');
    const off = openSqlite(join(tmp, 'no-thread.db'), { checkpointer: false });
    try {
      expect(checkpointerOf(mem)).toBeUndefined();
      expect(checkpointerOf(off)).toBeUndefined();
      expect(off.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    } finally {
      mem.close();
      off.close();
    }
  });

  it('copies the WAL back and empties it once appends stop', async () => {
    const path = join(tmp, 'idle.db');
    const db = openSqlite(path, { checkpointer: { intervalMs: 10 } });
    try {
      const buffer = new SqliteTurnBuffer(db);
      const scope = randomScope();
      for (let i = 0; i < 200; i++) buffer.append(scope, 's-1', makeTurnInput());
      expect(statSync(`${path}-wal`).size).toBeGreaterThan(0);
      await waitFor(() => statSync(`${path}-wal`).size === 0, 10_000, 'WAL truncated by the idle checkpoint');
      expect(await buffer.list(scope)).toHaveLength(200);
    } finally {
      db.close();
    }
  });

  it('rewinds the WAL under appends that never pause, so the file is reused instead of growing', async () => {
    const path = join(tmp, 'busy.db');
    const db = openSqlite(path, { checkpointer: { intervalMs: 5, restartWalBytes: 256 * 1024 } });
    try {
      // The thread is up once it has emptied the WAL the migrations wrote.
      await waitFor(() => statSync(`${path}-wal`).size === 0, 10_000, 'checkpointer thread running');
      const checkpointer = checkpointerOf(db)!;
      const buffer = new SqliteTurnBuffer(db);
      const scope = randomScope();
      // How soon the thread gets a core depends on the machine's load, so the loop runs
      // until it has seen two rewinds rather than for a fixed count (which flaked on a busy CI box).
      let appends = 0;
      let firstSalt: string | null = null;
      while (firstSalt === null) {
        await buffer.append(sibling(scope, `u${appends % 50}`), 's-1', makeTurnInput());
        appends++;
        firstSalt = walSalt(`${path}-wal`);
      }
      while (checkpointer.rewinds < 2 && appends < 100_000) {
        await buffer.append(sibling(scope, `u${appends % 50}`), 's-1', makeTurnInput());
        appends++;
        if (appends % 10 === 0) await nextTick();
      }
      expect(checkpointer.rewinds, `rewinds after ${appends} appends`).toBeGreaterThanOrEqual(2);
      // The writer starts the log over at its next commit after a rewind, with new salts in the WAL
      // header: that, not the file's size (which depends on how soon the thread got a core), shows
      // the file is being reused rather than growing. (If an idle tick truncated the file instead,
      // the next write also starts a new log; an empty file is read again after one more append.)
      let salt: string | null = null;
      for (let i = 0; i < 10 || salt === null; i++, appends++) {
        await buffer.append(sibling(scope, `u${appends % 50}`), 's-1', makeTurnInput());
        salt = walSalt(`${path}-wal`);
      }
      expect(salt).not.toBe(firstSalt);
      expect(await buffer.list(sibling(scope, 'u7'))).toHaveLength(Math.ceil((appends - 7) / 50));
    } finally {
      db.close();
    }
  });

  it('reports a thread that cannot work (here: cannot open the file) through onFailure', async () => {
    const reasons: string[] = [];
    const broken = new WalCheckpointer(join(tmp, 'missing-dir', 'x.db'), DEFAULT_CHECKPOINTER, (reason) => reasons.push(reason));
    await broken.exited;
    expect(reasons).toHaveLength(1);
    expect(existsSync(join(tmp, 'missing-dir'))).toBe(false);
  });

  it('gives the main connection its auto-checkpoint back when the thread dies', async () => {
    // The thread opens its own connection after openSqlite returns: removing the directory first makes it fail.
    const dir = join(tmp, 'vanishing');
    const db = openSqlite(join(dir, 'dies.db'));
    removeDir(dir);
    try {
      await checkpointerOf(db)!.exited;
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    } finally {
      db.close();
    }
  });
});

/** The salts of a WAL file's header (bytes 16–23), new at each restart of the log; null when the file is empty. */
function walSalt(walPath: string): string | null {
  const header = Buffer.alloc(24);
  const fd = openSync(walPath, 'r');
  try {
    return readSync(fd, header, 0, 24, 0) < 24 ? null : header.subarray(16, 24).toString('hex');
  } finally {
    closeSync(fd);
  }
}
