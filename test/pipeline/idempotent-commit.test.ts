import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testConfig } from '../support/config.ts';
import { RAJIV_FIRST_CALL } from '../support/fixtures.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { Scope } from '../../src/core/types.ts';
import { createRuntime, type Runtime } from '../../src/app/wiring.ts';

// A crash between the index writes and the hot-document commit must leave a
// state that the retried job completes without duplicating anything.
let runtime: Runtime;
const scope: Scope = { tenantId: 't', agentId: 'real-estate', userId: 'rajiv' };
const turns = RAJIV_FIRST_CALL;

async function loadedRuntime(): Promise<Runtime> {
  const rt = await createRuntime(testConfig({ sqlite: { path: ':memory:' }, memory: { minKeptTurns: 2, maxKeptTurns: 2 }, log: { level: 'silent' } }), { logger: silentLogger });
  await rt.service.startSession(scope, 'call-1');
  for (const [i, [role, text]] of turns.entries()) {
    await rt.service.appendTurn(scope, 'call-1', { role, text, turnId: `t${i}`, ts: Date.parse('2026-01-05T10:00:00Z') + i * 5000 });
  }
  return rt;
}

beforeEach(async () => {
  runtime = await loadedRuntime();
});
afterEach(() => runtime.close());

async function snapshot() {
  const doc = await runtime.ports.documents.getHot(scope);
  return {
    entities: (doc?.entities ?? []).map((e) => ({ ...e, recordedAt: '' })),
    acus: await runtime.ports.acus.count(scope),
    cold: await runtime.ports.cold.count(scope),
    buffered: (await runtime.service.bufferedTurns(scope)).map((t) => t.turnId),
    archivedCounter: doc?.counters.turnsArchived ?? 0,
  };
}

describe('extraction commit idempotency', () => {
  it('a job that died before its commit is redone without duplicating ACUs, cold turns or facts', async () => {
    const documents = runtime.ports.documents;
    const realCommit = documents.commitHot.bind(documents);
    let failures = 1;
    documents.commitHot = async (doc, expected) => {
      if (failures-- > 0) throw new Error('worker killed before commit');
      return realCommit(doc, expected);
    };
    await expect(runtime.service.flush(scope)).rejects.toThrow(/killed/);
    const afterCrash = await snapshot();
    expect(afterCrash.buffered).toHaveLength(10); // nothing left the buffer without a commit
    expect(afterCrash.entities).toEqual([]);
    expect(afterCrash.acus).toBeGreaterThan(0); // the crash happened after the index writes

    const report = await runtime.service.flush(scope);
    expect(report.ran).toBe(true);
    const done = await snapshot();
    expect(done.acus).toBe(afterCrash.acus);
    expect(report.acusIndexed).toBe(done.acus); // counted once, by the run that committed
    // Only the window's own near-duplicates (a question-and-answer ACU and the answer alone), as
    // in a run that never crashed: none of the ACUs the dead run indexed counts as a duplicate.
    const clean = await loadedRuntime();
    try {
      expect(report.acusSuppressed).toBe((await clean.service.flush(scope)).acusSuppressed);
    } finally {
      await clean.close();
    }
    expect(done.cold).toBe(8);
    expect(done.archivedCounter).toBe(8);
    expect(done.buffered).toEqual(['t8', 't9']);
    expect(done.entities.map((e) => e.key).sort()).toEqual(['budget', 'bedrooms', 'full_name', 'loan_status', 'preferred_location'].sort());
  });

  it('running the same job again changes no fact and adds no ACU', async () => {
    await runtime.service.flush(scope);
    const first = await snapshot();
    const again = await runtime.service.flush(scope);
    const second = await snapshot();
    expect(again.entitiesInserted).toBe(0);
    expect(again.entitiesSuperseded).toBe(0);
    expect(again.acusIndexed).toBe(0);
    expect(second.entities).toEqual(first.entities);
    expect(second.acus).toBe(first.acus);
    expect(second.cold).toBe(first.cold);
  });
});
