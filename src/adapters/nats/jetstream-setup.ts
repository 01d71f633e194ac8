import { AckPolicy, DeliverPolicy, nanos, RetentionPolicy, StorageType, type JetStreamManager, type StreamConfig } from 'nats';

/** Names and limits of the bus's JetStream resources. */
export interface BusTopology {
  /** Work-queue stream of pending jobs. */
  stream: string;
  /** Dead-letter stream (limits retention). */
  dlqStream: string;
  /** Durable pull consumer shared by every worker. */
  consumer: string;
  /** Jobs on `<subjectPrefix>.jobs.<tenant>.<agent>.<user>`, dead letters on `<subjectPrefix>.dlq.…`. */
  subjectPrefix: string;
  jobSubjects: string;
  dlqSubjects: string;
  duplicateWindowMs: number;
  dlqMaxAgeMs: number;
}

/**
 * Creates a stream, or brings an existing one's mutable limits in line. A
 * change JetStream refuses (retention, storage) surfaces as the server's error.
 */
async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  try {
    await jsm.streams.add(config);
  } catch (err) {
    const info = await jsm.streams.info(config.name).catch(() => null);
    if (info === null) throw err;
    await jsm.streams.update(config.name, { ...info.config, ...config });
  }
}

/**
 * The job stream (work queue: a message lives until acked or termed; one
 * consumer per subject) and the dead-letter stream (limits: kept `dlqMaxAgeMs`
 * for inspection and replay). Both on file storage: jobs survive a NATS restart.
 */
export async function ensureStreams(jsm: JetStreamManager, t: BusTopology): Promise<void> {
  await ensureStream(jsm, {
    name: t.stream,
    subjects: [t.jobSubjects],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    duplicate_window: nanos(t.duplicateWindowMs),
  });
  await ensureStream(jsm, {
    name: t.dlqStream,
    subjects: [t.dlqSubjects],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    max_age: nanos(t.dlqMaxAgeMs),
    // Dead-lettering a message may race between a worker and the max-deliveries advisory: dedup by source seq.
    duplicate_window: nanos(Math.min(t.duplicateWindowMs, t.dlqMaxAgeMs)),
  });
}

/**
 * The shared durable pull consumer. `maxDeliver` is also the server-side cap:
 * a worker that dies on the last attempt leaves the message to the
 * max-deliveries advisory, which dead-letters it (see dead-letters.ts). With
 * `update` false an existing consumer is left as it is (a publishing gateway
 * must not reset the cap the workers set).
 */
export async function ensureConsumer(jsm: JetStreamManager, t: BusTopology, ackWaitMs: number, maxDeliver: number, update = true): Promise<void> {
  const wanted = { ack_wait: nanos(ackWaitMs), max_deliver: maxDeliver };
  const info = await jsm.consumers.info(t.stream, t.consumer).catch(() => null);
  if (info === null) {
    try {
      await jsm.consumers.add(t.stream, {
        durable_name: t.consumer,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ...wanted,
      });
      return;
    } catch (err) {
      // Another process created it first: fall through to the update check.
      if ((await jsm.consumers.info(t.stream, t.consumer).catch(() => null)) === null) throw err;
    }
  }
  if (!update) return;
  const current = info ?? (await jsm.consumers.info(t.stream, t.consumer));
  if (current.config.ack_wait !== wanted.ack_wait || current.config.max_deliver !== wanted.max_deliver) {
    await jsm.consumers.update(t.stream, t.consumer, wanted);
  }
}
