/**
 * The thread lane's own contract, against a scripted thread (support/fake-thread-entry.ts):
 * replies and errors cross the boundary, events are re-published, a crashed thread
 * is replaced and its in-flight job is redelivered by the bus, close() is bounded.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId as mainThreadId } from 'node:worker_threads';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { InProcessEventBus, InProcessJobBus } from '../../src/adapters/inprocess/index.ts';
import { testConfig } from '../support/config.ts';
import { MemgateError } from '../../src/core/errors.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { ExtractionDeps } from '../../src/pipeline/extraction-job.ts';
import type { MemgateEvent } from '../../src/ports/event-bus.ts';
import type { ExtractionPorts } from '../../src/ports/index.ts';
import { startExtractionWorker } from '../../src/workers/extraction-worker.ts';
import { startThreadLane, type ThreadLane } from '../../src/workers/thread-lane.ts';
import { randomScope } from '../support/fixtures.ts';
import { waitFor } from '../support/wait.ts';
import { removeDir } from '../support/tmp.ts';

const FAKE_ENTRY = new URL('./support/fake-thread-entry.ts', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'memgate-lane-protocol-'));
afterAll(() => removeDir(dir));

const open: ThreadLane[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((l) => l.close()));
});

function fakeLane(stopTimeoutMs = 5_000): { lane: ThreadLane; events: MemgateEvent[] } {
  const bus = new InProcessEventBus();
  const events: MemgateEvent[] = [];
  bus.subscribe((e) => events.push(e));
  // The fake thread uses sqlite.path as a scratch directory that outlives it.
  const lane = startThreadLane(testConfig({ sqlite: { path: dir } }), { events: bus, logger: silentLogger, entry: FAKE_ENTRY, stopTimeoutMs });
  open.push(lane);
  return { lane, events };
}

describe('thread lane protocol', () => {
  it('answers a run with the report from another thread and re-publishes its events here', async () => {
    const { lane, events } = fakeLane();
    const scope = randomScope();
    const report = await lane.run(scope, 1_000);
    expect(report).toMatchObject({ ran: true, turnsRead: 3 });
    expect(events).toEqual([expect.objectContaining({ type: 'extraction.started', userId: scope.userId })]);
    const stats = lane.stats();
    expect(stats.runsDone).toBe(1);
    expect(stats.threadId).not.toBeNull();
    expect(stats.threadId).not.toBe(mainThreadId);
  });

  it("rethrows the thread's failure as a MemgateError with its code and retryability", async () => {
    const { lane } = fakeLane();
    const err = await lane.run(randomScope({ userId: 'fail-1' }), 1_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MemgateError);
    expect(err).toMatchObject({ code: 'conflict', message: 'scripted conflict', retryable: true });
    expect(lane.stats().runsFailed).toBe(1);
  });

  it('replaces a crashed thread; the in-flight run fails retryably and later runs succeed', async () => {
    const { lane } = fakeLane();
    const err = await lane.run(randomScope({ userId: `crash-once-${Date.now()}` }), 1_000).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'unavailable', retryable: true });
    expect(lane.stats().restarts).toBe(1);
    await expect(lane.run(randomScope(), 1_000)).resolves.toMatchObject({ ran: true });
  });

  it('a job in flight when the thread crashed is redelivered by the bus and completes on the new thread', async () => {
    const { lane } = fakeLane();
    const bus = new InProcessJobBus();
    const events = new InProcessEventBus();
    const failures: MemgateEvent[] = [];
    events.subscribe((e) => e.type === 'extraction.failed' && failures.push(e));
    // Only what the consumer itself touches: the bus, the events and the logger (the runs go to the lane).
    const deps = { ports: { events } as unknown as ExtractionPorts, logger: silentLogger, lockTtlMs: 1_000, deferral: { deferAfterMs: 0, upgradeBatch: 0, maxDeferred: 0 } } as ExtractionDeps;
    const consumer = startExtractionWorker(bus, deps, { concurrency: 1, maxDeliver: 3, retryDelayMs: 10, flushDeadlineMs: 1_000 }, (scope, maxWaitMs) => lane.run(scope, maxWaitMs));
    try {
      await bus.publish({ scope: randomScope({ userId: `crash-once-job-${Date.now()}` }), reason: 'threshold', requestedAt: Date.now() });
      await waitFor(() => lane.stats().runsDone === 1, 10_000, 'the redelivered job to complete');
      expect(lane.stats().restarts).toBe(1);
      expect(failures).toEqual([expect.objectContaining({ data: expect.objectContaining({ code: 'unavailable', attempt: 1, retryable: true }) })]);
      expect(bus.deadLetters).toEqual([]);
    } finally {
      await consumer.stop();
      await bus.close();
    }
  });

  it('close() lets nothing new in, and terminates a thread whose run does not finish in time', async () => {
    const { lane } = fakeLane(200);
    const stuck = lane.run(randomScope({ userId: 'slow-1' }), 1_000).catch((e: unknown) => e);
    await lane.close();
    expect(await stuck).toMatchObject({ code: 'unavailable' });
    await expect(lane.run(randomScope(), 1_000)).rejects.toMatchObject({ code: 'unavailable' });
  });
});
