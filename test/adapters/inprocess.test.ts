import { describe, expect, it } from 'vitest';
import { InProcessEventBus, InProcessJobBus, InProcessUserLock } from '../../src/adapters/inprocess/index.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { MemgateError } from '../../src/core/errors.ts';
import { createLogger } from '../../src/core/logger.ts';
import type { MemgateEvent } from '../../src/ports/event-bus.ts';
import type { ExtractionJob } from '../../src/ports/job-bus.ts';
import { eventBusContract } from '../contract/event-bus.contract.ts';
import { jobBusContract } from '../contract/job-bus.contract.ts';
import { userLockContract } from '../contract/user-lock.contract.ts';
import { makeEvent, makeJob, randomScope, sibling } from '../support/fixtures.ts';
import { gate, waitFor } from '../support/wait.ts';

jobBusContract('in-process', async () => new InProcessJobBus());
userLockContract('in-process', async () => new InProcessUserLock());
eventBusContract('in-process', async () => new InProcessEventBus());

const OPTIONS = { maxDeliver: 3, retryDelayMs: 5, concurrency: 2 };

describe('InProcessJobBus (adapter-only)', () => {
  it('keeps dead letters with their attempts and error, and logs them', async () => {
    const lines: string[] = [];
    const bus = new InProcessJobBus({ logger: createLogger('debug', {}, (l) => void lines.push(l)) });
    const job = makeJob(randomScope());
    const boom = new Error('extractor down');
    const consumer = bus.consume(async () => {
      throw boom;
    }, OPTIONS);
    await bus.publish(job);
    await waitFor(() => bus.deadLetters.length === 1);
    await consumer.stop();
    expect(bus.deadLetters[0]).toMatchObject({ job, attempts: 3, error: boom });
    expect(lines.some((l) => l.includes('"level":"error"') && l.includes('dead-lettered'))).toBe(true);
    expect(await bus.depth()).toBe(0);
    await bus.close();
  });

  it('never runs two jobs of one user at once, even with free concurrency', async () => {
    const bus = new InProcessJobBus();
    const a = randomScope();
    const hold = gate();
    const running = new Map<string, number>();
    let overlap = false;
    const seen: ExtractionJob[] = [];
    const consumer = bus.consume(
      async (job) => {
        seen.push(job);
        const user = job.scope.userId;
        running.set(user, (running.get(user) ?? 0) + 1);
        if (running.get(user)! > 1) overlap = true;
        if (seen.length === 1) await hold.promise;
        running.set(user, running.get(user)! - 1);
      },
      { ...OPTIONS, concurrency: 4 },
    );
    await bus.publish(makeJob(a, 'threshold'));
    await waitFor(() => seen.length === 1);
    await bus.publish(makeJob(a, 'end'));
    await bus.publish(makeJob(sibling(a)));
    await waitFor(() => seen.length === 2);
    expect(seen[1]!.scope.userId).not.toBe(a.userId);
    hold.open();
    await waitFor(() => seen.length === 3);
    await consumer.stop();
    expect(overlap).toBe(false);
    expect(seen[2]!.reason).toBe('end');
    await bus.close();
  });

  it('treats a job waiting for its retry as pending: a new publish for the user is deduplicated', async () => {
    const bus = new InProcessJobBus();
    const a = randomScope();
    const attempts: number[] = [];
    const consumer = bus.consume(
      async (_job, ctl) => {
        attempts.push(ctl.attempt);
        if (ctl.attempt === 1) throw new Error('once');
      },
      { ...OPTIONS, retryDelayMs: 200 },
    );
    await bus.publish(makeJob(a));
    await waitFor(() => attempts.length === 1);
    await waitFor(async () => (await bus.depth()) === 1);
    expect(await bus.publish(makeJob(a, 'end'))).toBe(false);
    await waitFor(() => attempts.length === 2);
    await consumer.stop();
    expect(attempts).toEqual([1, 2]);
    await bus.close();
  });

  it('does not run the handler inside publish(), and refuses work after close()', async () => {
    const bus = new InProcessJobBus();
    let inPublish = false;
    let ranInsidePublish = false;
    const consumer = bus.consume(async () => {
      ranInsidePublish = inPublish;
    }, OPTIONS);
    inPublish = true;
    const published = bus.publish(makeJob(randomScope()));
    inPublish = false;
    await published;
    await waitFor(async () => (await bus.depth()) === 0);
    expect(ranInsidePublish).toBe(false);
    await consumer.stop();
    await bus.close();
    await expect(bus.publish(makeJob(randomScope()))).rejects.toThrow(MemgateError);
    expect(() => bus.consume(async () => {}, OPTIONS)).toThrow(MemgateError);
  });

  it('rejects nonsensical consume options', async () => {
    const bus = new InProcessJobBus();
    expect(() => bus.consume(async () => {}, { ...OPTIONS, concurrency: 0 })).toThrow(MemgateError);
    expect(() => bus.consume(async () => {}, { ...OPTIONS, maxDeliver: 0 })).toThrow(MemgateError);
    await bus.close();
  });
});

describe('InProcessUserLock (adapter-only)', () => {
  it('expires on the injected clock, without sleeping', async () => {
    const clock = new ManualClock();
    const lock = new InProcessUserLock(clock);
    const a = (await lock.acquire('k', 1_000))!;
    clock.advance(999);
    expect(await a.isHeld()).toBe(true);
    expect(await lock.acquire('k', 1_000)).toBeNull();
    clock.advance(1);
    expect(await a.isHeld()).toBe(false);
    const b = (await lock.acquire('k', 1_000))!;
    expect(b.token).toBe(a.token + 1);
    await a.release();
    expect(await b.isHeld()).toBe(true);
  });

  it('keeps tokens increasing after release and after close-free reuse of the key', async () => {
    const lock = new InProcessUserLock(new ManualClock());
    const tokens: number[] = [];
    for (let i = 0; i < 3; i++) {
      const lease = (await lock.acquire('k', 10))!;
      tokens.push(lease.token);
      await lease.release();
    }
    expect(tokens).toEqual([1, 2, 3]);
  });
});

describe('InProcessEventBus (adapter-only)', () => {
  it('delivers synchronously, before publish() returns', () => {
    const bus = new InProcessEventBus();
    const got: MemgateEvent[] = [];
    bus.subscribe((e) => void got.push(e));
    bus.publish(makeEvent(randomScope()));
    expect(got).toHaveLength(1);
  });

  it('tolerates a subscriber that unsubscribes itself during delivery', () => {
    const bus = new InProcessEventBus();
    const got: string[] = [];
    const off = bus.subscribe(() => {
      got.push('once');
      off();
    });
    bus.subscribe(() => void got.push('always'));
    bus.publish(makeEvent(randomScope()));
    bus.publish(makeEvent(randomScope()));
    expect(got).toEqual(['once', 'always', 'always']);
  });

  it('delivers nothing after close()', async () => {
    const bus = new InProcessEventBus();
    const got: MemgateEvent[] = [];
    bus.subscribe((e) => void got.push(e));
    await bus.close();
    bus.publish(makeEvent(randomScope()));
    expect(got).toEqual([]);
  });
});
