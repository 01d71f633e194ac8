import { MemgateError } from '../../core/errors.ts';
import { silentLogger, type Logger } from '../../core/logger.ts';
import { jobKey, type ConsumeOptions, type Consumer, type ExtractionJob, type JobBus, type JobControl } from '../../ports/job-bus.ts';

/** A job that used up `maxDeliver` deliveries; its turns stay buffered for the next job. */
export interface DeadLetter {
  job: ExtractionJob;
  attempts: number;
  error: unknown;
  at: number;
}

/** Options of InProcessJobBus. */
export interface InProcessJobBusOptions {
  /** Where dead letters and superseded retries are reported. */
  logger?: Logger;
}

type Handler = (job: ExtractionJob, ctl: JobControl) => Promise<void>;

interface Entry {
  job: ExtractionJob;
  key: string;
  /** Deliveries so far. */
  attempt: number;
}

interface ConsumerState {
  handler: Handler;
  options: ConsumeOptions;
  active: number;
  stopped: boolean;
  inFlight: Set<Promise<void>>;
}

/**
 * The embedded job bus: a FIFO in process memory. At most one not-yet-started
 * job per user; a job published while the user's job runs waits until that one
 * settles (jobs of one user never overlap). Nothing survives a restart: the
 * turns do (they stay in the turn buffer), and the next append or `end`
 * publishes again.
 */
export class InProcessJobBus implements JobBus {
  /** Jobs that failed `maxDeliver` times, oldest first (inspected by tests and admin tools). */
  readonly deadLetters: DeadLetter[] = [];
  private readonly log: Logger;
  /** Eligible entries in publish order; an entry whose user is running is skipped, not removed. */
  private readonly ready: Entry[] = [];
  /** Not-yet-started entry per user (ready or waiting for a retry): the dedup set. */
  private readonly pending = new Map<string, Entry>();
  private readonly running = new Set<string>();
  private readonly consumers = new Set<ConsumerState>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private pumpScheduled = false;
  private closed = false;

  constructor(options: InProcessJobBusOptions = {}) {
    this.log = (options.logger ?? silentLogger).child({ component: 'job-bus' });
  }

  async publish(job: ExtractionJob): Promise<boolean> {
    if (this.closed) throw new MemgateError('unavailable', 'job bus is closed');
    const key = jobKey(job.scope);
    if (this.pending.has(key)) return false;
    const entry: Entry = { job, key, attempt: 0 };
    this.pending.set(key, entry);
    this.ready.push(entry);
    this.schedulePump();
    return true;
  }

  consume(handler: Handler, options: ConsumeOptions): Consumer {
    if (this.closed) throw new MemgateError('unavailable', 'job bus is closed');
    if (!(options.concurrency >= 1) || !(options.maxDeliver >= 1) || !(options.retryDelayMs >= 0)) {
      throw new MemgateError('bad_request', 'consume needs concurrency >= 1, maxDeliver >= 1 and retryDelayMs >= 0');
    }
    const state: ConsumerState = { handler, options, active: 0, stopped: false, inFlight: new Set() };
    this.consumers.add(state);
    this.schedulePump();
    return { stop: () => this.stopConsumer(state) };
  }

  async depth(): Promise<number> {
    return this.pending.size + this.running.size;
  }

  /** Stops every consumer (waiting for in-flight jobs) and drops jobs not yet started. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([...this.consumers].map((c) => this.stopConsumer(c)));
    this.ready.length = 0;
    this.pending.clear();
  }

  private async stopConsumer(state: ConsumerState): Promise<void> {
    state.stopped = true;
    this.consumers.delete(state);
    await Promise.allSettled([...state.inFlight]);
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    // Deferred so a handler never runs inside the publisher's call stack.
    queueMicrotask(() => this.pump());
  }

  private pump(): void {
    this.pumpScheduled = false;
    for (const consumer of this.consumers) {
      while (!consumer.stopped && consumer.active < consumer.options.concurrency) {
        const at = this.ready.findIndex((e) => !this.running.has(e.key));
        if (at < 0) return;
        this.start(consumer, this.ready.splice(at, 1)[0]!);
      }
    }
  }

  async requeueDeadLetters(limit: number): Promise<number> {
    if (this.closed) return 0;
    const moved = this.deadLetters.splice(0, Math.max(0, limit));
    for (const d of moved) await this.publish({ ...d.job, requestedAt: Date.now() });
    return moved.length;
  }

  private start(consumer: ConsumerState, entry: Entry): void {
    this.pending.delete(entry.key);
    this.running.add(entry.key);
    consumer.active++;
    entry.attempt++;
    const run = (async () => {
      try {
        await consumer.handler(entry.job, { attempt: entry.attempt });
      } catch (err) {
        this.failed(consumer.options, entry, err);
      } finally {
        this.running.delete(entry.key);
        consumer.active--;
        this.schedulePump();
      }
    })();
    consumer.inFlight.add(run);
    void run.finally(() => consumer.inFlight.delete(run));
  }

  private failed(options: ConsumeOptions, entry: Entry, error: unknown): void {
    const fields = { key: entry.key, attempt: entry.attempt, err: error };
    if (entry.attempt >= options.maxDeliver) {
      this.deadLetters.push({ job: entry.job, attempts: entry.attempt, error, at: Date.now() });
      this.log.error('extraction job dead-lettered', fields);
      return;
    }
    if (this.closed) return;
    if (this.pending.has(entry.key)) {
      // A newer job for the user is already queued and will process the same buffered turns.
      this.log.warn('failed extraction job superseded by a newer one', fields);
      return;
    }
    this.log.warn('extraction job failed, will retry', { ...fields, retryDelayMs: options.retryDelayMs });
    this.pending.set(entry.key, entry);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.closed) return;
      this.ready.push(entry);
      this.schedulePump();
    }, options.retryDelayMs);
    this.timers.add(timer);
  }
}
