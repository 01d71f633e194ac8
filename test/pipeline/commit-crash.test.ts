/**
 * The narrowest crash window of an extraction, which a SIGKILL cannot aim at:
 * the hot document is committed (window counted) but the window's turns are
 * still in the buffer. The next run must finish that removal, not commit the
 * window a second time. Embedded stack (SQLite file), no servers needed.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/core/logger.ts';
import type { Scope, Turn } from '../../src/core/types.ts';
import { testConfig } from '../support/config.ts';
import { openSqlite, type Database } from '../../src/adapters/sqlite/index.ts';
import { committedWindowLeftovers } from '../../src/pipeline/extraction-job.ts';
import { createRuntime, type Runtime } from '../../src/app/wiring.ts';
import { makeTurn, randomScope } from '../support/fixtures.ts';
import { removeDir } from '../support/tmp.ts';

let dir: string;
let runtime: Runtime;
let db: Database;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'memgate-commit-crash-'));
  const path = join(dir, 'memgate.db');
  runtime = await createRuntime(testConfig({ sqlite: { path }, server: { inlineWorkers: false } }), { logger: createLogger('silent') });
  db = openSqlite(path);
});

afterEach(async () => {
  db.close();
  await runtime.close();
  removeDir(dir);
});

async function appendTurns(scope: Scope, from: number, to: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = from; i < to; i++) {
    const ack = await runtime.service.appendTurn(scope, 's-1', { role: i % 2 === 0 ? 'user' : 'agent', text: `Turn ${i}: the ${i}th note about the garden and the river stone.`, turnId: `t${i}` });
    ids.push(ack.turnId);
  }
  return ids;
}

function archivedIds(scope: Scope): string[] {
  return db
    .prepare<[string, string, string], { turn_id: string }>('SELECT turn_id FROM ca_turns WHERE tenant_id = ? AND agent_id = ? AND user_id = ?')
    .all(scope.tenantId, scope.agentId, scope.userId)
    .map((r) => r.turn_id);
}

it('a run that committed but died before removing its window does not get that window committed twice', async () => {
  const scope = randomScope();
  await runtime.service.startSession(scope, 's-1');
  const sent = await appendTurns(scope, 0, 20);
  vi.spyOn(runtime.ports.buffer, 'remove').mockRejectedValueOnce(new Error('worker died after the commit'));
  await expect(runtime.service.flush(scope)).rejects.toThrow('worker died after the commit');
  const crashed = (await runtime.ports.documents.getHot(scope))!;
  expect(crashed.counters.turnsArchived).toBeGreaterThan(0);
  expect((await runtime.ports.buffer.list(scope)).length).toBe(20);

  sent.push(...(await appendTurns(scope, 20, 24)));
  const report = await runtime.service.flush(scope);
  expect(report.ran).toBe(true);

  const doc = (await runtime.ports.documents.getHot(scope))!;
  const archived = archivedIds(scope);
  const buffered = (await runtime.ports.buffer.list(scope)).map((t) => t.turnId);
  expect(buffered.filter((id) => archived.includes(id))).toEqual([]);
  expect(new Set([...archived, ...buffered])).toEqual(new Set(sent));
  expect(doc.counters.turnsArchived).toBe(archived.length);
  expect(doc.counters.acusIndexed).toBe(await runtime.ports.acus.count(scope));
  expect(doc.recent.map((t) => t.turnId)).toEqual(buffered);
});

it('leftovers are the buffered turns up to the newest kept seq that were not kept', () => {
  const turns: Turn[] = Array.from({ length: 10 }, (_, i) => makeTurn(i + 1, { turnId: `t${i + 1}` }));
  const recent = [turns[3]!, turns[6]!, turns[7]!];
  expect(committedWindowLeftovers(turns, recent)).toEqual(['t1', 't2', 't3', 't5', 't6']);
  expect(committedWindowLeftovers(turns, [])).toEqual([]);
});

it('a buffer that lost its data (seqs restarted) never has new turns taken for leftovers', () => {
  const recent = [makeTurn(7, { turnId: 'old-7' }), makeTurn(8, { turnId: 'old-8' })];
  const fresh = Array.from({ length: 9 }, (_, i) => makeTurn(i + 1, { turnId: `new-${i + 1}` }));
  expect(committedWindowLeftovers(fresh, recent)).toEqual([]);
});
