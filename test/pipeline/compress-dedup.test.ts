import { afterEach, describe, expect, it } from 'vitest';
import { OfflineEmbedder } from '../../src/adapters/offline/offline-embedder.ts';
import { OfflineExtractor } from '../../src/adapters/offline/offline-extractor.ts';
import { openSqlite, SqliteAcuIndex, type Database } from '../../src/adapters/sqlite/index.ts';
import type { Scope, Turn } from '../../src/core/types.ts';
import { compressWindow, type CompressDeps } from '../../src/pipeline/compress-stage.ts';
import type { AcuHit, AcuIndex } from '../../src/ports/acu-index.ts';
import { makeTurn, randomScope } from '../support/fixtures.ts';

const opts = { segmentTurns: 5, dedupThreshold: 0.95, now: Date.parse('2026-01-20T10:00:00Z'), knownProfile: {} };

function call(sessionId: string, lines: ReadonlyArray<readonly ['user' | 'agent', string]>, from: number): Turn[] {
  return lines.map(([role, text], i) => makeTurn(from + i, { role, text, sessionId, turnId: `${sessionId}-t${i}`, ts: Date.parse('2026-01-05T10:00:00Z') + (from + i) * 5000 }));
}

const firstCall = call(
  'call-1',
  [
    ['agent', 'What budget do you have in mind?'],
    ['user', 'My budget is around 50 lakhs.'],
    ['agent', 'Where would you like to buy?'],
    ['user', "I'm looking for a 3 BHK flat near Whitefield."],
    ['user', 'I have a dog named Bruno, so I need a pet friendly building.'],
  ],
  0,
);

// The caller repeats the dog almost word for word (another text, so another ACU id) and says one
// new thing twice in the same window.
const secondCall = call(
  'call-2',
  [
    ['agent', 'Welcome back! Remind me of your budget?'],
    ['user', 'My budget is around 50 lakhs.'],
    ['user', 'I have a dog named Bruno, so I need a pet friendly building too.'],
    ['user', 'My wife Priya works in Koramangala.'],
    ['agent', 'Noted.'],
    ['user', 'My wife Priya works in Koramangala.'],
  ],
  10,
);

/** The lookup the stage made before nearestMany existed: one search per ACU. */
function perAcuSearch(index: AcuIndex): AcuIndex {
  return Object.assign(Object.create(index) as AcuIndex, {
    nearestMany: async (scope: Scope, vectors: readonly Float32Array[], k: number): Promise<AcuHit[][]> => {
      const out: AcuHit[][] = [];
      for (const v of vectors) out.push(await index.search(scope, v, k));
      return out;
    },
  });
}

let db: Database | undefined;
afterEach(() => db?.close());

describe('ACU de-duplication of a window (compress stage)', () => {
  it('makes one batched lookup per window and the same decisions as one search per ACU', async () => {
    db = openSqlite(':memory:');
    const index = new SqliteAcuIndex(db);
    const scope = randomScope();
    const deps: CompressDeps = { extractor: new OfflineExtractor(), embedder: new OfflineEmbedder(), acus: index };
    const first = await compressWindow(deps, scope, firstCall, opts);
    expect(first.acus.length).toBeGreaterThan(0);
    await index.upsert(scope, first.acus);

    const calls = { nearestMany: 0, search: 0 };
    const counted: AcuIndex = Object.assign(Object.create(index) as AcuIndex, {
      nearestMany: (s: Scope, v: readonly Float32Array[], k: number) => (calls.nearestMany++, index.nearestMany(s, v, k)),
      search: (s: Scope, v: Float32Array, k: number) => (calls.search++, index.search(s, v, k)),
    });
    const batched = await compressWindow({ ...deps, acus: counted }, scope, secondCall, opts);
    const reference = await compressWindow({ ...deps, acus: perAcuSearch(index) }, scope, secondCall, opts);

    expect(calls).toEqual({ nearestMany: 1, search: 0 });
    expect(batched).toEqual(reference);
    // The near-repeat of the first call is suppressed against the index, the in-window repeat against the window.
    const firstIds = new Set(first.acus.map((a) => a.id));
    expect(batched.acus.filter((a) => /bruno/i.test(a.text) && !firstIds.has(a.id))).toEqual([]);
    expect(batched.acus.filter((a) => /priya/i.test(a.text))).toHaveLength(1);
    // Only Bruno's near-repeat counts: Priya's word-for-word repeat is dropped as an exact repeat, and
    // the budget answer, said word for word again, is the first call's ACU (same id, the upsert is a no-op).
    expect(batched.suppressed).toBe(1);
    expect(batched.acus.filter((a) => firstIds.has(a.id)).map((a) => a.text)).toEqual(["The user's budget is around 50 lakhs, as of 2026-01-05."]);
  });
});
