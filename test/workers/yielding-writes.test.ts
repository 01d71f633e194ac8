/**
 * The extraction thread's bulk writes go to the store in short pieces, in order,
 * with everything else of the ports untouched.
 */
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/app/wiring.ts';
import { testConfig } from '../support/config.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { yieldingWrites } from '../../src/workers/yielding-writes.ts';
import { makeAcu, makeTurn, randomScope, randomUnitVector } from '../support/fixtures.ts';

describe('yieldingWrites', () => {
  it('cuts upserts, archives and removals into pieces of `rows`, in order, and writes them all', async () => {
    const runtime = await createRuntime(testConfig({ sqlite: { path: ':memory:' }, log: { level: 'silent' } }), { logger: silentLogger });
    try {
      const pieces: Record<string, number[]> = { upsert: [], archive: [], remove: [] };
      const { acus, cold, buffer } = runtime.ports;
      const spy =
        <A extends unknown[]>(name: string, fn: (...a: A) => Promise<void>, size: (...a: A) => number) =>
        (...a: A) => {
          pieces[name]!.push(size(...a));
          return fn(...a);
        };
      const counted = {
        ...runtime.ports,
        acus: Object.assign(Object.create(acus) as typeof acus, { upsert: spy('upsert', acus.upsert.bind(acus), (_s, items: readonly unknown[]) => items.length) }),
        cold: Object.assign(Object.create(cold) as typeof cold, { archive: spy('archive', cold.archive.bind(cold), (_s, items: readonly unknown[]) => items.length) }),
        buffer: Object.assign(Object.create(buffer) as typeof buffer, { remove: spy('remove', buffer.remove.bind(buffer), (_s, ids: readonly unknown[]) => ids.length) }),
      };
      const ports = yieldingWrites(counted, { rows: 4, pauseMs: 0 });
      const scope = randomScope();

      await ports.acus.upsert(
        scope,
        Array.from({ length: 10 }, (_, i) => makeAcu(scope, `fact ${i}`, randomUnitVector())),
      );
      const turns = Array.from({ length: 9 }, (_, i) => makeTurn(i + 1));
      await ports.cold.archive(scope, turns);
      const appended = [];
      for (let i = 0; i < 6; i++) appended.push(await buffer.append(scope, 's-1', { ...makeTurn(0), turnId: `t${i}` }));
      await ports.buffer.remove(scope, ['t0', 't1', 't2', 't3', 't4']);

      expect(pieces).toEqual({ upsert: [4, 4, 2], archive: [4, 4, 1], remove: [4, 1] });
      // Pass-through members still answer, bound to the real adapters.
      expect(await ports.acus.count(scope)).toBe(10);
      expect(await ports.cold.count(scope)).toBe(9);
      expect((await ports.buffer.list(scope)).map((t) => t.turnId)).toEqual(['t5']);
      expect(appended).toHaveLength(6);
    } finally {
      await runtime.close();
    }
  });
});
