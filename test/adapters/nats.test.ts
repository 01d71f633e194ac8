import type { NatsConnection } from 'nats';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemgateError } from '../../src/core/errors.ts';
import { connectNats } from '../../src/adapters/nats/connect-nats.ts';
import { JetStreamJobBus, type JetStreamJobBusOptions } from '../../src/adapters/nats/jetstream-job-bus.ts';
import { NatsEventBus } from '../../src/adapters/nats/nats-event-bus.ts';
import type { Consumer, ExtractionJob, JobControl } from '../../src/ports/job-bus.ts';
import { eventBusContract } from '../contract/event-bus.contract.ts';
import { jobBusContract } from '../contract/job-bus.contract.ts';
import { makeJob, randomScope, rid } from '../support/fixtures.ts';
import { describeWithServer } from '../support/servers.ts';
import { gate, sleep, waitFor } from '../support/wait.ts';

/** A stream name and subject prefix no other test (or file) uses. */
function namespace(): Pick<JetStreamJobBusOptions, 'stream' | 'subjectPrefix'> {
  const id = rid().replace(/-/g, '');
  return { stream: `MGTEST_${id}`, subjectPrefix: `mgtest.${id}` };
}

const OPTIONS = { maxDeliver: 3, retryDelayMs: 50, concurrency: 1 };

describeWithServer('nats', 'NATS adapters', (url) => {
  let nc: NatsConnection;
  const extraConnections: NatsConnection[] = [];
  const connect = async (): Promise<NatsConnection> => {
    const c = await connectNats(url);
    extraConnections.push(c);
    return c;
  };

  beforeAll(async () => {
    nc = await connectNats(url);
  });
  afterAll(async () => {
    await Promise.all([nc, ...extraConnections].map(async (c) => (c.isClosed() ? undefined : c.close())));
  });

  jobBusContract('JetStreamJobBus', async () => JetStreamJobBus.create(nc, { ...namespace(), ackWaitMs: 5_000 }), {
    cleanup: async (bus) => (bus as JetStreamJobBus).dangerouslyDeleteAll(),
  });
  eventBusContract('NatsEventBus', async () => new NatsEventBus(nc, namespace().subjectPrefix));

  describe('JetStreamJobBus (adapter-only)', () => {
    const buses: Array<{ bus: JetStreamJobBus; conn: NatsConnection }> = [];
    const consumers: Consumer[] = [];
    /** Handlers a test holds; opened after it so stop() never waits on a failed test's gate. */
    const holds: Array<ReturnType<typeof gate>> = [];
    const held = () => {
      const g = gate();
      holds.push(g);
      return g;
    };
    const open = async (conn: NatsConnection, ns: ReturnType<typeof namespace>, extra: JetStreamJobBusOptions = {}) => {
      const bus = await JetStreamJobBus.create(conn, { ...ns, ackWaitMs: 2_000, ...extra });
      buses.push({ bus, conn });
      return bus;
    };
    /** A consumer recording deliveries, running `behaviour` for each. */
    const consume = (bus: JetStreamJobBus, behaviour: (attempt: number) => Promise<void> | void = () => {}, options = OPTIONS) => {
      const seen: Array<{ job: ExtractionJob; attempt: number }> = [];
      const consumer = bus.consume(async (job: ExtractionJob, ctl: JobControl) => {
        seen.push({ job, attempt: ctl.attempt });
        await behaviour(ctl.attempt);
      }, options);
      consumers.push(consumer);
      return seen;
    };
    afterEach(async () => {
      for (const g of holds.splice(0)) g.open();
      await Promise.all(consumers.splice(0).map(async (c) => c.stop()));
      const list = buses.splice(0);
      // Through a bus on the shared connection: a test may have closed the others' connections.
      await list.find((b) => b.conn === nc)?.bus.dangerouslyDeleteAll();
      await Promise.all(list.map(async (b) => b.bus.close()));
    });

    it('redelivers to another worker after a worker dies mid-job without acking', async () => {
      const ns = namespace();
      const doomed = await connect();
      const hold = held();
      const dying = consume(await open(doomed, ns), () => hold.promise);
      const survivor = await open(nc, ns);
      const job = makeJob(randomScope());
      expect(await survivor.publish(job)).toBe(true);
      await waitFor(() => dying.length === 1, 10_000, 'first delivery');
      await doomed.close();
      const seen = consume(survivor);
      await waitFor(() => seen.length === 1, 10_000, 'redelivery after ack_wait');
      expect(seen[0]).toEqual({ job, attempt: 2 });
      await waitFor(async () => (await survivor.depth()) === 0, 10_000, 'acked');
    });

    it('dead-letters after maxDeliver failures, with the attempts recorded, and leaves nothing pending', async () => {
      const ns = namespace();
      const bus = await open(nc, ns);
      const scope = randomScope({ userId: 'user.with dots ☎' });
      const job = makeJob(scope, 'end');
      await bus.publish(job);
      const seen = consume(bus, () => {
        throw new Error('model unavailable');
      });
      await waitFor(async () => (await bus.deadLetterCount()) === 1, 10_000, 'dead letter');
      expect(seen.map((d) => d.attempt)).toEqual([1, 2, 3]);
      await waitFor(async () => (await bus.depth()) === 0, 10_000, 'nothing pending');
      const jsm = await nc.jetstreamManager();
      const dead = await jsm.streams.getMessage(bus.names.dlqStream, { seq: 1 });
      expect(dead.subject.startsWith(`${ns.subjectPrefix}.dlq.`)).toBe(true);
      expect(dead.header.get('Memgate-Attempts')).toBe('3');
      expect(dead.header.get('Memgate-Error')).toBe('model unavailable');
      expect(dead.json<ExtractionJob>()).toEqual(job);
    });

    it('dead-letters a non-retryable failure at once', async () => {
      const bus = await open(nc, namespace());
      await bus.publish(makeJob(randomScope()));
      const seen = consume(bus, () => {
        throw new MemgateError('bad_request', 'schema rejects the window');
      });
      await waitFor(async () => (await bus.deadLetterCount()) === 1, 10_000, 'dead letter');
      await sleep(300);
      expect(seen.map((d) => d.attempt)).toEqual([1]);
    });

    it('dead-letters a job whose worker died on its last allowed attempt (max-deliveries advisory)', async () => {
      const ns = namespace();
      const doomed = await connect();
      const hold = held();
      const dying = consume(await open(doomed, ns), () => hold.promise, { ...OPTIONS, maxDeliver: 1 });
      const survivor = await open(nc, ns);
      await survivor.publish(makeJob(randomScope()));
      await waitFor(() => dying.length === 1, 10_000, 'the only delivery');
      await doomed.close();
      // JetStream notices the exhausted message (and emits the advisory) when it next tries to deliver: a worker must be pulling.
      const seen = consume(survivor, () => {}, { ...OPTIONS, maxDeliver: 1 });
      await waitFor(async () => (await survivor.deadLetterCount()) === 1, 15_000, 'dead letter from the advisory');
      expect(seen).toEqual([]);
      const jsm = await nc.jetstreamManager();
      await waitFor(async () => (await jsm.streams.info(ns.stream!)).state.messages === 0, 5_000, 'removed from the work queue');
      const dead = await jsm.streams.getMessage(survivor.names.dlqStream, { seq: 1 });
      expect(dead.header.get('Memgate-Error-Code')).toBe('max_deliver');
    });

    it('dedups across gateways while a job is pending, and not once a worker took it', async () => {
      const ns = namespace();
      const gatewayA = await open(nc, ns);
      const gatewayB = await open(await connect(), ns);
      const scope = randomScope();
      expect(await gatewayA.publish(makeJob(scope, 'threshold'))).toBe(true);
      expect(await gatewayB.publish(makeJob(scope, 'end'))).toBe(false);
      const hold = held();
      const seen = consume(gatewayA, async (attempt) => {
        if (seen.length === 1 && attempt === 1) await hold.promise;
      });
      await waitFor(() => seen.length === 1, 10_000, 'taken');
      expect(await gatewayB.publish(makeJob(scope, 'end'))).toBe(true);
      expect(await gatewayA.publish(makeJob(scope, 'flush'))).toBe(false);
      hold.open();
      await waitFor(() => seen.length === 2, 10_000, 'the follow-up job');
      await waitFor(async () => (await gatewayA.depth()) === 0, 10_000, 'drained');
      expect(seen.map((d) => d.job.reason)).toEqual(['threshold', 'end']);
    });

    it('keeps a long job alive with working() heartbeats past ack_wait', async () => {
      const bus = await open(nc, namespace(), { ackWaitMs: 1_000 });
      await bus.publish(makeJob(randomScope()));
      const seen = consume(bus, () => sleep(2_500));
      await waitFor(async () => seen.length === 1 && (await bus.depth()) === 0, 10_000, 'acked');
      expect(seen.map((d) => d.attempt)).toEqual([1]);
    });
  });
});
