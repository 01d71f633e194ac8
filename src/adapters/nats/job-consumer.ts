import type { Consumer as JsConsumer, ConsumerMessages, JetStreamClient, JsMsg, NatsConnection } from 'nats';
import { MemgateError } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import { jobKey, type ConsumeOptions, type Consumer, type ExtractionJob, type JobControl } from '../../ports/job-bus.ts';
import { publishDeadLetter } from './dead-letters.ts';
import type { JobGenerations } from './job-generations.ts';
import type { BusTopology } from './jetstream-setup.ts';
import { decodeJob, generationKey } from './job-codec.ts';

type Handler = (job: ExtractionJob, ctl: JobControl) => Promise<void>;

/** What one running consumer needs from its bus. */
export interface JobConsumerDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  topology: BusTopology;
  generations: JobGenerations;
  ackWaitMs: number;
  pullExpiresMs: number;
  log: Logger;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const backoffMs = (failures: number) => Math.min(5_000, 100 * 2 ** Math.min(failures, 6));

/**
 * `concurrency` slots, each pulling one message at a time (a pull is only made
 * when a slot is free, so no job waits in a client buffer while its ack timer
 * runs). Per message: raise the user's generation, run the handler with
 * `working()` heartbeats, then ack; on a throw nak(retryDelayMs), or on the last
 * attempt (or a non-retryable MemgateError) dead-letter and term.
 */
export class JobConsumer implements Consumer {
  private stopping = false;
  private readonly pulls = new Set<ConsumerMessages>();
  private readonly slots: Array<Promise<void>> = [];

  /** `ready` yields the shared durable; it is asked again (with backoff) until it succeeds or `stop()`. */
  constructor(
    private readonly deps: JobConsumerDeps,
    private readonly handler: Handler,
    private readonly options: ConsumeOptions,
    ready: () => Promise<JsConsumer>,
  ) {
    this.slots.push(this.start(ready));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    // A stopped pull loses its interest; the server hands its message to another pull at once.
    for (const pull of this.pulls) pull.stop();
    // Slots are added once `ready` settles, so wait until the list stops growing.
    let seen = 0;
    while (seen < this.slots.length) {
      const batch = this.slots.slice(seen);
      seen = this.slots.length;
      await Promise.allSettled(batch);
    }
    if (!this.deps.nc.isClosed()) await this.deps.nc.flush().catch(() => undefined);
  }

  private async start(ready: () => Promise<JsConsumer>): Promise<void> {
    for (let failures = 1; !this.stopping && !this.deps.nc.isClosed(); failures++) {
      try {
        const consumer = await ready();
        for (let i = 0; i < this.options.concurrency; i++) this.slots.push(this.slot(consumer));
        return;
      } catch (err) {
        this.deps.log.error('job consumer could not start, retrying', { err, failures });
        await sleep(backoffMs(failures));
      }
    }
  }

  private async slot(consumer: JsConsumer): Promise<void> {
    let failures = 0;
    while (!this.stopping && !this.deps.nc.isClosed()) {
      try {
        const pull = await consumer.fetch({ max_messages: 1, expires: this.deps.pullExpiresMs });
        this.pulls.add(pull);
        if (this.stopping) pull.stop();
        try {
          for await (const msg of pull) {
            if (this.stopping) msg.nak();
            else await this.process(msg);
          }
        } finally {
          this.pulls.delete(pull);
        }
        failures = 0;
      } catch (err) {
        if (this.stopping || this.deps.nc.isClosed()) return;
        failures++;
        this.deps.log.warn('job pull failed', { err, failures });
        await sleep(backoffMs(failures));
      }
    }
  }

  private async process(msg: JsMsg): Promise<void> {
    const attempt = msg.info.deliveryCount;
    let job: ExtractionJob;
    try {
      job = decodeJob(msg.data);
    } catch (err) {
      await this.deadLetter(msg, attempt, new MemgateError('bad_request', 'undecodable job payload', { cause: err }));
      return;
    }
    try {
      // Before the handler reads the buffer: a publish from now on queues a new job (job-generations.ts).
      await this.deps.generations.advance(generationKey(jobKey(job.scope)), msg.seq);
    } catch (err) {
      this.deps.log.warn('job generation update failed, redelivering', { err, attempt });
      msg.nak(this.options.retryDelayMs);
      return;
    }
    const failure = await this.run(msg, job, attempt);
    if (this.deps.nc.isClosed()) return; // no ack possible: the server redelivers after ack_wait
    if (failure === null) {
      msg.ack();
      return;
    }
    const permanent = failure instanceof MemgateError && !failure.retryable;
    if (permanent || attempt >= this.options.maxDeliver) await this.deadLetter(msg, attempt, failure);
    else msg.nak(this.options.retryDelayMs > 0 ? this.options.retryDelayMs : undefined);
  }

  /** Runs the handler with `working()` heartbeats; returns what it threw, or null. */
  private async run(msg: JsMsg, job: ExtractionJob, attempt: number): Promise<unknown> {
    const heartbeat = setInterval(
      () => {
        if (!this.deps.nc.isClosed()) msg.working();
      },
      Math.max(200, Math.floor(this.deps.ackWaitMs / 3)),
    );
    try {
      await this.handler(job, { attempt });
      return null;
    } catch (err) {
      return err ?? new Error('handler threw a nullish value');
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async deadLetter(msg: JsMsg, attempt: number, err: unknown): Promise<void> {
    const code = err instanceof MemgateError ? err.code : 'error';
    const message = err instanceof Error ? err.message : String(err);
    try {
      await publishDeadLetter(this.deps.js, this.deps.topology, msg.subject, msg.seq, msg.data, { attempts: attempt, code, message });
      msg.term();
      this.deps.log.error('extraction job dead-lettered', { seq: msg.seq, attempt, code });
    } catch (publishErr) {
      // Not lost: redelivered, or (deliveries exhausted) dead-lettered by the advisory listener.
      this.deps.log.error('dead-lettering failed, redelivering', { seq: msg.seq, err: publishErr });
      msg.nak(this.options.retryDelayMs);
    }
  }
}
