import { afterEach, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/core/types.ts';
import type { ConsumeOptions, Consumer, ExtractionJob, JobBus, JobControl } from '../../src/ports/job-bus.ts';
import { jobKey } from '../../src/ports/job-bus.ts';
import { makeJob, randomScope, sibling } from '../support/fixtures.ts';
import { useSubject, type ContractOptions } from '../support/subject.ts';
import { gate, sleep, waitFor } from '../support/wait.ts';

const OPTIONS: ConsumeOptions = { maxDeliver: 3, retryDelayMs: 30, concurrency: 2 };
const WAIT_MS = 10_000;

interface Delivery {
  key: string;
  job: ExtractionJob;
  attempt: number;
}

/**
 * The JobBus contract: once-only delivery, per-user dedup of pending jobs,
 * retry then dead-letter, concurrency, graceful stop. `make` must return a bus
 * on its own namespace (stream, subjects), so depth() sees only this test.
 */
export function jobBusContract(name: string, make: () => Promise<JobBus>, opts: ContractOptions<JobBus> = {}): void {
  describe(`JobBus contract: ${name}`, () => {
    const bus = useSubject(make, opts);
    let consumers: Consumer[] = [];
    // Registered after useSubject, so it runs before the bus is closed.
    afterEach(async () => {
      await Promise.all(consumers.map((c) => c.stop()));
      consumers = [];
    });

    /** Start a consumer that records deliveries, then runs `behaviour` (default: succeed). */
    function consume(options: Partial<ConsumeOptions> = {}, behaviour: (d: Delivery) => Promise<void> | void = () => {}) {
      const deliveries: Delivery[] = [];
      const consumer = bus().consume(
        async (job: ExtractionJob, ctl: JobControl) => {
          const d = { key: jobKey(job.scope), job, attempt: ctl.attempt };
          deliveries.push(d);
          await behaviour(d);
        },
        { ...OPTIONS, ...options },
      );
      consumers.push(consumer);
      const of = (scope: Scope) => deliveries.filter((d) => d.key === jobKey(scope));
      return { consumer, deliveries, of };
    }

    const drained = async () => waitFor(async () => (await bus().depth()) === 0, WAIT_MS, 'depth 0');

    it('delivers a published job once, with attempt 1, and then has nothing left', async () => {
      const a = randomScope();
      const job = makeJob(a, 'end');
      expect(await bus().publish(job)).toBe(true);
      const { of } = consume();
      await waitFor(() => of(a).length === 1, WAIT_MS, 'delivery');
      await drained();
      const b = sibling(a);
      await bus().publish(makeJob(b));
      await waitFor(() => of(b).length === 1, WAIT_MS, 'barrier delivery');
      expect(of(a)).toEqual([{ key: jobKey(a), job, attempt: 1 }]);
    });

    it('keeps at most one pending job per user (dedup) and delivers it once', async () => {
      const a = randomScope();
      const b = sibling(a);
      expect(await bus().publish(makeJob(a, 'threshold'))).toBe(true);
      expect(await bus().publish(makeJob(a, 'end'))).toBe(false);
      expect(await bus().publish(makeJob(b))).toBe(true);
      expect(await bus().depth()).toBe(2);
      const { of } = consume();
      await waitFor(() => of(a).length === 1 && of(b).length === 1, WAIT_MS, 'deliveries');
      await drained();
      expect(of(a)).toHaveLength(1);
      expect(of(a)[0]!.job.reason).toBe('threshold');
      expect(await bus().publish(makeJob(a, 'flush'))).toBe(true);
      await waitFor(() => of(a).length === 2, WAIT_MS, 'new delivery after the first was acked');
    });

    it('queues a job re-published while the user’s job is in flight, once, after it', async () => {
      const a = randomScope();
      const hold = gate();
      const { of } = consume({ concurrency: 1 }, async (d) => {
        if (d.attempt === 1 && of(a).length === 1) await hold.promise;
      });
      await bus().publish(makeJob(a, 'threshold'));
      await waitFor(() => of(a).length === 1, WAIT_MS, 'first delivery');
      expect(await bus().publish(makeJob(a, 'end'))).toBe(true);
      expect(await bus().publish(makeJob(a, 'flush'))).toBe(false);
      hold.open();
      await waitFor(() => of(a).length === 2, WAIT_MS, 'follow-up delivery');
      await drained();
      expect(of(a).map((d) => d.job.reason)).toEqual(['threshold', 'end']);
    });

    it('redelivers a failed job with an increasing attempt until it succeeds', async () => {
      const a = randomScope();
      const { of } = consume({}, (d) => {
        if (d.attempt < 2) throw new Error('transient failure');
      });
      await bus().publish(makeJob(a));
      await waitFor(() => of(a).length === 2, WAIT_MS, 'redelivery');
      await drained();
      expect(of(a).map((d) => d.attempt)).toEqual([1, 2]);
    });

    it('dead-letters a job after maxDeliver failed deliveries and stops redelivering it', async () => {
      const a = randomScope();
      const { of } = consume({ maxDeliver: 3 }, () => {
        throw new Error('permanent failure');
      });
      await bus().publish(makeJob(a));
      await waitFor(() => of(a).length === 3, WAIT_MS, 'three deliveries');
      await drained();
      await sleep(OPTIONS.retryDelayMs * 5);
      expect(of(a).map((d) => d.attempt)).toEqual([1, 2, 3]);
      expect(await bus().publish(makeJob(a))).toBe(true);
      await waitFor(() => of(a).length === 4, WAIT_MS, 'a fresh job after the dead letter');
      expect(of(a)[3]!.attempt).toBe(1);
    });

    it('requeues dead-lettered jobs once the cause heals: each delivered again once, then none left', async () => {
      const [a, b] = [randomScope(), randomScope()];
      let healed = false;
      const { of } = consume({ maxDeliver: 2 }, () => {
        if (!healed) throw new Error('endpoint down');
      });
      await bus().publish(makeJob(a));
      await bus().publish(makeJob(b));
      await waitFor(() => of(a).length === 2 && of(b).length === 2, WAIT_MS, 'both jobs exhausted');
      await drained();
      healed = true;
      // The dead-letter write may trail the last failed delivery by a moment.
      let moved = 0;
      await waitFor(async () => (moved += await bus().requeueDeadLetters(100)) === 2, WAIT_MS, 'two dead letters requeued');
      await waitFor(() => of(a).length === 3 && of(b).length === 3, WAIT_MS, 'redelivered after the requeue');
      await drained();
      expect(await bus().requeueDeadLetters(100)).toBe(0);
    });

    it('runs at most `concurrency` jobs at once', async () => {
      const scopes = [randomScope(), randomScope(), randomScope()];
      const hold = gate();
      let running = 0;
      let peak = 0;
      const { deliveries } = consume({ concurrency: 2 }, async () => {
        running++;
        peak = Math.max(peak, running);
        await hold.promise;
        running--;
      });
      for (const s of scopes) await bus().publish(makeJob(s));
      await waitFor(() => deliveries.length === 2, WAIT_MS, 'two started');
      await sleep(100);
      expect(deliveries).toHaveLength(2);
      hold.open();
      await waitFor(() => deliveries.length === 3, WAIT_MS, 'third started');
      await drained();
      expect(peak).toBe(2);
    });

    it('counts waiting and in-flight jobs in depth()', async () => {
      const a = randomScope();
      const b = sibling(a);
      await bus().publish(makeJob(a));
      await bus().publish(makeJob(b));
      expect(await bus().depth()).toBe(2);
      const hold = gate();
      const { deliveries } = consume({}, () => hold.promise);
      await waitFor(() => deliveries.length === 2, WAIT_MS, 'both started');
      expect(await bus().depth()).toBe(2);
      hold.open();
      await drained();
    });

    it('stop() waits for in-flight handlers and takes no new jobs', async () => {
      const a = randomScope();
      const hold = gate();
      let finished = false;
      const { consumer, deliveries } = consume({}, async () => {
        await hold.promise;
        finished = true;
      });
      await bus().publish(makeJob(a));
      await waitFor(() => deliveries.length === 1, WAIT_MS, 'started');
      let stopped = false;
      const stopping = consumer.stop().then(() => {
        stopped = true;
      });
      await sleep(50);
      expect(stopped).toBe(false);
      hold.open();
      await stopping;
      expect(finished).toBe(true);
      await bus().publish(makeJob(sibling(a)));
      await sleep(100);
      expect(deliveries).toHaveLength(1);
      await waitFor(async () => (await bus().depth()) === 1, WAIT_MS, 'the new job waiting');
    });
  });
}
