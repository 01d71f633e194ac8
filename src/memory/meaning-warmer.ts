import type { ExtractionSchema } from '../core/extraction-schema.ts';
import { fieldTexts, type SemanticTiers, type VectorText } from './semantic-tiers.ts';

/** Bounds of the warm queue. */
export interface MeaningWarmerOptions {
  /**
   * Share of one core the warm-up may keep the encoder busy, in (0, 1]: after a batch that took
   * t ms it rests t·(1/share − 1) ms. At 0.1 the encoder spends at most a tenth of its time here,
   * however many turns arrive; what the queue cannot keep up with is embedded at search time,
   * within the search's wait.
   */
  share: number;
  /** Texts queued at most (default 256): past it the oldest go, the newest are what a search reads first. */
  maxQueued?: number;
  /** Texts per batch (default 2): a query arriving meanwhile waits behind one small batch at most. */
  batch?: number;
  /** Monotonic ms (default performance.now): measures a batch. */
  now?: () => number;
  /** Waits `ms` (default: an unref'd timer, so a resting queue never keeps a process alive). */
  sleep?: (ms: number) => Promise<void>;
}

/** What the warm queue did, for diagnostics. */
export interface WarmStats {
  queued: number;
  embedded: number;
  dropped: number;
}

/**
 * Embeds appended turns (and schema fields) into SemanticTiers' caches off the call path, so a
 * search by meaning finds their vectors cached instead of waiting for the encoder. One queue per
 * process, newest first, bounded in length and in encoder time (see `share`); the caller's ack
 * never waits for it: `add` only queues, the batches start on a later tick. It also takes over
 * what a search's wait left unembedded (SemanticTiers.handLeftoversTo).
 */
export class MeaningWarmer {
  private readonly queue: VectorText[] = [];
  private readonly share: number;
  private readonly maxQueued: number;
  private readonly batch: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  /** When the next batch may start: the end of the last batch plus its rest. */
  private resumeAt = -Infinity;
  private running = false;
  private inFlight = false;
  private closed = false;
  private idleWaiters: Array<() => void> = [];
  /** Turns offered in the current second and the last whole one, and the encoder's measured ms per text. */
  private offered = { since: -Infinity, count: 0, lastRate: 0 };
  private msPerText: number | null = null;
  private readonly counts = { embedded: 0, dropped: 0 };

  constructor(
    private readonly tiers: SemanticTiers,
    options: MeaningWarmerOptions,
  ) {
    if (!(options.share > 0 && options.share <= 1)) throw new RangeError(`warm share must be in (0, 1], got ${options.share}`);
    this.share = options.share;
    this.maxQueued = options.maxQueued ?? 256;
    this.batch = Math.max(1, options.batch ?? 2);
    this.now = options.now ?? (() => performance.now());
    this.sleep = options.sleep ?? unrefSleep;
    // What a search's wait leaves unembedded is embedded here, under the budget, not by the search's own chain.
    tiers.handLeftoversTo((texts) => texts.forEach((t) => this.add(t)));
  }

  /** Queue a turn's text (skipped when cached, being embedded or blank). */
  addTurn(text: string): void {
    if (this.futile()) {
      this.counts.dropped += 1 + this.queue.splice(0).length;
      return;
    }
    this.add({ kind: 'turn', text });
  }

  /**
   * Whether turns come at more than twice the rate the share can embed (measured): the queue
   * would then warm under half of them, each a random few, while its batches still cost the
   * call path its share of the cores. At 1,000 turns/s the share embeds ~1 %: nothing is warmed
   * and searches embed within their wait; at the pace of dozens of calls every turn is warmed.
   */
  private futile(): boolean {
    const now = this.now();
    if (now - this.offered.since >= 1000) {
      const whole = now - this.offered.since < 2000;
      this.offered = { since: now, count: 0, lastRate: whole ? this.offered.count : 0 };
    }
    this.offered.count++;
    if (this.msPerText === null) return false;
    const capacity = (this.share * 1000) / this.msPerText;
    return this.offered.lastRate > 2 * capacity;
  }

  /** Queue a schema's field texts (a schema read or put): a first search then finds them cached. */
  addFields(schema: ExtractionSchema): void {
    for (const text of fieldTexts(schema)) this.add({ kind: 'field', text });
  }

  /**
   * Resolves when nothing is queued nor being embedded (a rest after the last batch does not
   * count: nothing more will be embedded). For tests and diagnostics: a search made after it
   * finds every appended turn's vector cached, so its results do not depend on timing.
   */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stats(): WarmStats {
    return { queued: this.queue.length, ...this.counts };
  }

  /** Drop what is queued and stop (the runtime is closing); a batch in flight finishes into the cache. */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.notifyIdle();
  }

  private add(item: VectorText): void {
    if (this.closed || item.text.trim() === '' || this.tiers.has(item.kind, item.text)) return;
    this.queue.push(item);
    if (this.queue.length > this.maxQueued) this.counts.dropped += this.queue.splice(0, this.queue.length - this.maxQueued).length;
    if (!this.running) void this.run();
  }

  /** Batches, newest first, each after the previous one's rest. */
  private async run(): Promise<void> {
    this.running = true;
    try {
      while (!this.closed) {
        // Always yield first: `add` runs on the ack path, the first batch must not start inside it.
        await this.sleep(Math.max(0, this.resumeAt - this.now()));
        const batch = this.take();
        if (batch.length === 0) break;
        this.inFlight = true;
        const started = this.now();
        let embedded = 0;
        try {
          // A failed text is left uncached (warm never rejects for it): a search embeds it.
          embedded = await this.tiers.warm(batch);
        } finally {
          this.inFlight = false;
        }
        this.counts.embedded += embedded;
        const ended = this.now();
        // Wall time: a batch that queued behind a search's query counts that wait too, so under load the rest is longer, never shorter.
        if (embedded > 0) {
          this.resumeAt = ended + (ended - started) * (1 / this.share - 1);
          const perText = (ended - started) / embedded;
          this.msPerText = this.msPerText === null ? perText : 0.8 * this.msPerText + 0.2 * perText;
        }
        this.notifyIdle();
      }
    } finally {
      this.running = false;
      this.notifyIdle();
    }
  }

  /** Up to `batch` of the newest queued texts that still need a vector. */
  private take(): VectorText[] {
    const out: VectorText[] = [];
    while (out.length < this.batch && this.queue.length > 0) {
      const item = this.queue.pop()!;
      if (!this.tiers.has(item.kind, item.text) && !out.some((o) => o.kind === item.kind && o.text === item.text)) out.push(item);
    }
    return out;
  }

  private isIdle(): boolean {
    return this.queue.length === 0 && !this.inFlight;
  }

  private notifyIdle(): void {
    if (!this.isIdle()) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}

function unrefSleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0) setImmediate(resolve);
    else setTimeout(resolve, ms).unref();
  });
}
