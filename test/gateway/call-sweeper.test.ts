/**
 * The sweep of dropped calls (src/gateway/call-sweeper.ts) over a real SQLite turn buffer and a
 * moved clock: which calls it ends, with what, and that several sweepers end each call once.
 * The crash itself, with real processes, is test/e2e/gateway-crash.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openSqlite, SqliteTurnBuffer, type Database } from '../../src/adapters/sqlite/index.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { Scope } from '../../src/core/types.ts';
import { CallSweeper } from '../../src/gateway/call-sweeper.ts';
import { DroppedCalls } from '../../src/gateway/dropped-calls.ts';
import type { EndOptions } from '../../src/gateway/observed-api.ts';
import { randomScope, rid } from '../support/fixtures.ts';

const TIMING = { leaseMs: 3_000, graceMs: 1_000, intervalMs: 60_000 };

let db: Database | undefined;
afterEach(() => db?.close());

function setup() {
  db = openSqlite(':memory:');
  const buffer = new SqliteTurnBuffer(db);
  const clock = { now: 1_000_000 };
  const ends: Array<{ sessionId: string; options: EndOptions; ended: boolean }> = [];
  // The observed service as the sweep sees it: the store's conditional end, each attempt recorded.
  const service = {
    async endSession(scope: Scope, sessionId: string, options: EndOptions = {}) {
      const ended = await buffer.endSession(scope.tenantId, sessionId, clock.now, options.ifGeneration);
      ends.push({ sessionId, options, ended });
      return ended;
    },
  };
  const sweeper = (holder = rid('gw_')) => new CallSweeper(buffer, service, silentLogger, holder, TIMING, () => clock.now);
  return { buffer, clock, ends, service, sweeper };
}

describe('CallSweeper', () => {
  it('ends the calls of a gateway gone for its lease plus the grace, as dropped with the generation read; keeps a call started again', async () => {
    const { buffer, clock, ends, sweeper } = setup();
    const dead = sweeper('gw_dead');
    await dead.start();
    await dead.stop(); // killed: nothing renews its lease any more
    const scope = randomScope();
    const [held, moved] = [rid('held-'), rid('moved-')];
    await buffer.openSession({ sessionId: held, scope, startedAt: clock.now, endedAt: null, holder: 'gw_dead' });
    await buffer.openSession({ sessionId: moved, scope, startedAt: clock.now, endedAt: null, holder: 'gw_dead' });
    const survivor = sweeper();
    await survivor.start();
    await buffer.renewLease(survivor.holder, clock.now + 3_600_000); // its timer renews in real time; the clock here is moved by hand
    // The call on `moved` reconnected to the survivor.
    await buffer.openSession({ sessionId: moved, scope, startedAt: clock.now, endedAt: null, holder: survivor.holder });

    clock.now += TIMING.leaseMs + TIMING.graceMs - 1;
    await survivor.sweep();
    expect(ends).toEqual([]);
    clock.now += 1;
    await survivor.sweep();
    expect(ends).toEqual([{ sessionId: held, options: { ifGeneration: 1, reason: 'dropped' }, ended: true }]);
    await survivor.sweep();
    expect(ends).toHaveLength(1);
    expect((await buffer.getSession(scope.tenantId, moved))?.endedAt).toBeNull();
    await survivor.stop();
  });

  it('ends a drop whose gateway died within the grace once the grace is over, and not before', async () => {
    const { buffer, clock, ends, service, sweeper } = setup();
    const scope = randomScope();
    const sessionId = rid('s-');
    const gone = sweeper();
    await gone.start();
    await buffer.openSession({ sessionId, scope, startedAt: clock.now, endedAt: null, holder: gone.holder });
    // The socket closes; the gateway records the deferred end (with the real clock: its due time is Date.now() + grace), then dies.
    const drops = new DroppedCalls(service, silentLogger, TIMING.graceMs, buffer);
    const closedAt = Date.now();
    drops.schedule(scope, sessionId, 1, 3);
    drops.cancel(scope.tenantId, sessionId); // the timer dies with the process
    await gone.stop();
    await new Promise((r) => setImmediate(r));
    expect((await buffer.getSession(scope.tenantId, sessionId))?.dueAt).toBeGreaterThanOrEqual(closedAt + TIMING.graceMs);

    const other = sweeper();
    clock.now = closedAt;
    await other.start();
    expect(ends).toEqual([]);
    clock.now = closedAt + TIMING.graceMs + 50;
    await other.sweep();
    expect(ends).toEqual([{ sessionId, options: { ifGeneration: 1, reason: 'dropped' }, ended: true }]);
    await other.stop();
  });

  it('of several gateways sweeping at once, exactly one ends each call', async () => {
    const { buffer, clock, ends, sweeper } = setup();
    const scope = randomScope();
    const ids = Array.from({ length: 5 }, () => rid('s-'));
    for (const sessionId of ids) await buffer.openSession({ sessionId, scope, startedAt: clock.now, endedAt: null, holder: 'gw_gone' });
    const sweepers = [sweeper(), sweeper(), sweeper()];
    await Promise.all(sweepers.map((s) => s.start()));
    clock.now += 60_000;
    await Promise.all(sweepers.map((s) => s.sweep()));
    for (const sessionId of ids) expect(ends.filter((e) => e.sessionId === sessionId && e.ended)).toHaveLength(1);
    await Promise.all(sweepers.map((s) => s.stop()));
  });
});
