import type { Consumer as JsConsumer, JetStreamClient, JetStreamManager, NatsConnection, Subscription } from 'nats';
import { MemgateError } from '../../core/errors.ts';
import { CONFIG_DEFAULTS } from '../../config/config-schema.ts';
import { silentLogger, type Logger } from '../../core/logger.ts';
import { jobKey, type ConsumeOptions, type Consumer, type ExtractionJob, type JobBus, type JobControl } from '../../ports/job-bus.ts';
import { natsFailure } from './connect-nats.ts';
import { listenForExhaustedJobs } from './dead-letters.ts';
import { decodeJob, encodeJob, generationKey } from './job-codec.ts';
import { JobConsumer } from './job-consumer.ts';
import { JobGenerations } from './job-generations.ts';
import { ensureConsumer, ensureStreams, type BusTopology } from './jetstream-setup.ts';
import { assertJetStreamName, assertSubjectPrefix, scopeTokens } from './subjects.ts';

/** Options of {@link JetStreamJobBus.create}. */
export interface JetStreamJobBusOptions {
  /** Work-queue stream name (default: config `nats.stream`); the DLQ is `<stream>_DLQ`. */
  stream?: string;
  /** Subject prefix (config `nats.subjectPrefix`): jobs on `<prefix>.jobs.>`, dead letters on `<prefix>.dlq.>`. */
  subjectPrefix?: string;
  /** Durable consumer shared by all workers. Default `<stream>_WORKERS`. */
  consumer?: string;
  /** Unacked time before a silent worker's job is redelivered; handlers heartbeat every third of it. Default: config `nats.ackWaitMs`. */
  ackWaitMs?: number;
  /** How long a pending job's msgID dedups re-publishes. Default 10 min. */
  duplicateWindowMs?: number;
  /** Dead letters kept this long. Default 14 days. */
  dlqMaxAgeMs?: number;
  /** Server-side delivery cap of a newly created consumer; every `consume()` sets it from its own options. Default: config `worker.maxDeliver`. */
  maxDeliver?: number;
  /** Longest a free worker slot's pull waits before re-pulling (≥ 1000). Default 5 s. */
  pullExpiresMs?: number;
  logger?: Logger;
  /** Drain the connection on `close()` (true when the bus owns it). */
  closeConnection?: boolean;
}

/**
 * JobBus on a NATS JetStream work queue. Jobs live in a file-backed stream until
 * a worker acks them, so neither a worker crash (redelivery after `ackWaitMs`)
 * nor a NATS restart loses one. Dedup of pending jobs is JetStream's msgID
 * window with a per-user generation (job-generations.ts documents why it never
 * drops a job that is needed). Needs nats-server ≥ 2.7 (nak with delay); runs
 * on Debian's 2.9.10 (no 2.10 features used).
 */
export class JetStreamJobBus implements JobBus {
  private readonly consumers = new Set<JobConsumer>();
  private consumerReady: Promise<JsConsumer> | null = null;
  private lastMaxDeliver = 0;
  private closed = false;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly js: JetStreamClient,
    private readonly topology: BusTopology,
    private readonly generations: JobGenerations,
    private readonly advisories: Subscription,
    private readonly options: Required<Pick<JetStreamJobBusOptions, 'ackWaitMs' | 'pullExpiresMs' | 'closeConnection'>> & { log: Logger; subjectPrefix: string },
  ) {}

  /** Connects the bus to `nc`: creates or updates the streams, the consumer and the generation bucket. */
  static async create(nc: NatsConnection, options: JetStreamJobBusOptions = {}): Promise<JetStreamJobBus> {
    const stream = options.stream ?? CONFIG_DEFAULTS.nats.stream;
    const subjectPrefix = options.subjectPrefix ?? CONFIG_DEFAULTS.nats.subjectPrefix;
    const duplicateWindowMs = options.duplicateWindowMs ?? 10 * 60_000;
    const topology: BusTopology = {
      stream,
      dlqStream: `${stream}_DLQ`,
      consumer: options.consumer ?? `${stream}_WORKERS`,
      subjectPrefix,
      jobSubjects: `${subjectPrefix}.jobs.>`,
      dlqSubjects: `${subjectPrefix}.dlq.>`,
      duplicateWindowMs,
      dlqMaxAgeMs: options.dlqMaxAgeMs ?? 14 * 24 * 3_600_000,
    };
    for (const name of [topology.stream, topology.dlqStream, topology.consumer]) assertJetStreamName(name);
    assertSubjectPrefix(subjectPrefix);
    const ackWaitMs = options.ackWaitMs ?? CONFIG_DEFAULTS.nats.ackWaitMs;
    const maxDeliver = options.maxDeliver ?? CONFIG_DEFAULTS.worker.maxDeliver;
    const log = (options.logger ?? silentLogger).child({ component: 'job-bus' });
    try {
      const jsm = await nc.jetstreamManager();
      const js = nc.jetstream();
      await ensureStreams(jsm, topology);
      await ensureConsumer(jsm, topology, ackWaitMs, maxDeliver, false);
      const generations = await JobGenerations.open(js, `${stream}_GEN`, Math.max(24 * 3_600_000, 2 * duplicateWindowMs));
      const advisories = listenForExhaustedJobs(nc, jsm, js, topology, log);
      const resolved = {
        ackWaitMs,
        pullExpiresMs: Math.max(1_000, options.pullExpiresMs ?? 5_000),
        closeConnection: options.closeConnection ?? false,
        log,
        subjectPrefix,
      };
      return new JetStreamJobBus(nc, jsm, js, topology, generations, advisories, resolved);
    } catch (err) {
      throw natsFailure('job bus setup', err);
    }
  }

  /** The stream, consumer and subjects in use (tests, admin tools). */
  get names(): Readonly<BusTopology> {
    return this.topology;
  }

  async publish(job: ExtractionJob): Promise<boolean> {
    if (this.closed) throw new MemgateError('unavailable', 'job bus is closed');
    const key = generationKey(jobKey(job.scope));
    try {
      // Read after the caller's turns are durable (it publishes after appending): see job-generations.ts.
      const generation = await this.generations.current(key);
      const subject = `${this.options.subjectPrefix}.jobs.${scopeTokens(job.scope)}`;
      const ack = await this.js.publish(subject, encodeJob(job), { msgID: `${key}#${generation}` });
      return !ack.duplicate;
    } catch (err) {
      throw natsFailure('publish', err);
    }
  }

  consume(handler: (job: ExtractionJob, ctl: JobControl) => Promise<void>, options: ConsumeOptions): Consumer {
    if (this.closed) throw new MemgateError('unavailable', 'job bus is closed');
    if (!(options.concurrency >= 1) || !(options.maxDeliver >= 1) || !(options.retryDelayMs >= 0)) {
      throw new MemgateError('bad_request', 'consume needs concurrency >= 1, maxDeliver >= 1 and retryDelayMs >= 0');
    }
    const deps = {
      nc: this.nc,
      js: this.js,
      topology: this.topology,
      generations: this.generations,
      ackWaitMs: this.options.ackWaitMs,
      pullExpiresMs: this.options.pullExpiresMs,
      log: this.options.log,
    };
    const consumer = new JobConsumer(deps, handler, options, () => this.jsConsumer(options.maxDeliver));
    this.consumers.add(consumer);
    return {
      stop: async () => {
        this.consumers.delete(consumer);
        await consumer.stop();
      },
    };
  }

  /** Jobs waiting (including those waiting for a retry) plus jobs in flight. */
  async depth(): Promise<number> {
    try {
      const info = await this.jsm.consumers.info(this.topology.stream, this.topology.consumer);
      return info.num_pending + info.num_ack_pending;
    } catch (err) {
      throw natsFailure('depth', err);
    }
  }

  async requeueDeadLetters(limit: number): Promise<number> {
    if (this.closed) return 0;
    try {
      const { state } = await this.jsm.streams.info(this.topology.dlqStream);
      let moved = 0;
      for (let seq = state.first_seq; seq <= state.last_seq && moved < limit && state.messages > 0; seq++) {
        const stored = await this.jsm.streams.getMessage(this.topology.dlqStream, { seq }).catch(() => null);
        if (stored === null) continue;
        // Delete first: of two sweepers racing on one letter, only the one whose delete succeeds requeues it.
        if (!(await this.jsm.streams.deleteMessage(this.topology.dlqStream, seq).catch(() => false))) continue;
        await this.publish({ ...decodeJob(stored.data), requestedAt: Date.now() });
        moved++;
      }
      return moved;
    } catch (err) {
      throw natsFailure('requeueDeadLetters', err);
    }
  }

  /** Dead letters currently kept (metrics, tests). */
  async deadLetterCount(): Promise<number> {
    try {
      return (await this.jsm.streams.info(this.topology.dlqStream)).state.messages;
    } catch (err) {
      throw natsFailure('deadLetterCount', err);
    }
  }

  /** Test-only: deletes both streams, the consumer and the generation bucket. */
  async dangerouslyDeleteAll(): Promise<void> {
    for (const name of [this.topology.stream, this.topology.dlqStream, `KV_${this.topology.stream}_GEN`]) {
      await this.jsm.streams.delete(name).catch(() => false);
    }
  }

  /** Stops every consumer (waiting for in-flight jobs); pending jobs stay in the stream. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.consumers].map((c) => c.stop()));
    this.consumers.clear();
    if (!this.nc.isClosed()) this.advisories.unsubscribe();
    if (this.options.closeConnection && !this.nc.isClosed()) await this.nc.drain();
  }

  /** The shared durable, with its delivery cap set to the latest consume()'s `maxDeliver`. */
  private jsConsumer(maxDeliver: number): Promise<JsConsumer> {
    if (this.consumerReady === null || maxDeliver !== this.lastMaxDeliver) {
      this.lastMaxDeliver = maxDeliver;
      const ready = ensureConsumer(this.jsm, this.topology, this.options.ackWaitMs, maxDeliver).then(async () => this.js.consumers.get(this.topology.stream, this.topology.consumer));
      // A failed setup is not cached: the next consumer (or retry) asks the server again.
      ready.catch(() => {
        if (this.consumerReady === ready) this.consumerReady = null;
      });
      this.consumerReady = ready;
    }
    return this.consumerReady;
  }
}
