import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { MemgateError, toMemgateError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { activeSpanContext } from '../core/tracing.ts';
import { CpuBudget } from '../core/cpu-budget.ts';
import { DutyCycle } from '../core/duty-cycle.ts';
import { threadExecArgv, threadLoaderFor } from '../core/module-threads.ts';
import type { Scope } from '../core/types.ts';
import type { Config } from '../config/config-schema.ts';
import type { EventBus } from '../ports/event-bus.ts';
import type { ExtractionReport } from '../service/api.ts';
import type { SemanticMode } from '../pipeline/deferred-acus.ts';
import type { FromThread, ThreadLaneData, ToThread } from './thread-protocol.ts';

/** Options of `startThreadLane`. */
export interface ThreadLaneOptions {
  logger: Logger;
  /** Where the thread's events are re-published: the gateway's bus, so dashboards and /metrics see them. */
  events: EventBus;
  /** How long `close()` lets in-flight runs commit before terminating the thread. */
  stopTimeoutMs?: number;
  /** The thread's entry module (default: src/app/thread-entry). */
  entry?: URL;
  /**
   * The gateway's sentence encoder (raw vectors), lent to the thread so the process holds one
   * copy of the model, not two (~30 MiB each on the int8 runtime, ~150 MiB on TF.js). The thread's calls are cut into `ENCODE_CHUNK`
   * texts each, so a search's query embedding waits for one small batch at most.
   */
  encode?: (texts: string[]) => Promise<Float32Array[]>;
  /**
   * Share of one core the lent encoder may spend on the thread's texts (embeddings.laneEncoderShare):
   * chunks are paced (DutyCycle), so under load the lane's runs wait, fall behind and index their
   * new ACUs lexically (deferred-acus.ts) instead of taking the cores the call path needs.
   */
  encodeShare?: number;
  /**
   * Share of one core the lane may take (worker.laneCpuShare): the thread's event-loop busy time
   * plus the lent encoder's time on its texts. A run is handed over only while within it. Work elsewhere on
   * the machine lengthens the acks' tail in proportion to the CPU it takes, whatever its priority
   * (measured: BENCHMARKS.md), so the lane is held to a share and coalesces windows when behind.
   */
  cpuShare?: number;
  /**
   * The gateway's own turn removal, done for the thread (`remove` messages): the append's file
   * then has one writer, and an append never waits for the thread's write lock.
   */
  removeTurns?: (scope: Scope, turnIds: readonly string[]) => Promise<void>;
}

/** Texts per lent encoder call: ~4 × 2–3 ms of model time (int8; ~4 × 7 ms on TF.js), what a query may wait behind. */
const ENCODE_CHUNK = 4;

/** Counters for tests and diagnostics. */
export interface ThreadLaneStats {
  /** `threadId` the last run reported (never 0, the main thread's). */
  threadId: number | null;
  runsDone: number;
  runsFailed: number;
  restarts: number;
  /** Kernel thread id of the running extraction thread (Linux), null before it is up or where unknown. */
  tid: number | null;
  /** That thread's nice value as read back from the kernel, null where unknown. */
  niceness: number | null;
  /** Its scheduling policy as the kernel reports it ('idle': SCHED_IDLE, worker.idlePolicy). */
  policy: 'idle' | 'normal' | 'other' | null;
  /** Texts the thread had the gateway's lent encoder embed (ThreadLaneOptions.encode). */
  textsEncoded: number;
  /** CPU ms counted against the lane's budget (cpuShare): the current thread's busy time plus the lent encoder's. */
  cpuMs: number;
}

/** The embedded extraction lane on a worker thread: runs one user's extraction there and answers with its report. */
export interface ThreadLane {
  /**
   * Extract the user's buffered turns in the thread, waiting up to `maxWaitMs` for a run of the
   * same user in progress; its failure comes back as a MemgateError with the thread's code.
   * `paced` (default): the run waits for the lane's CPU budget (cpuShare); a flush, which someone
   * is waiting for, passes false and goes first (its CPU still counts against the budget).
   */
  run(scope: Scope, maxWaitMs: number, mode?: SemanticMode, paced?: boolean): Promise<ExtractionReport>;
  /**
   * Resolves once a thread is up (or the lane closed). Loading the runtime into a
   * fresh isolate takes ~1 s (2-3 s on a loaded machine); runs sent earlier wait for it.
   */
  ready(): Promise<void>;
  stats(): ThreadLaneStats;
  /** Stop taking runs, let in-flight ones commit (bounded), close the thread's runtime, end the thread. Idempotent. */
  close(): Promise<void>;
}

/**
 * Start the lane. Throws `unavailable` (not retryable) when the thread cannot be
 * loaded here (TypeScript sources without a resolvable tsx): the caller then
 * extracts inline. The thread starts in the background; runs queue until it is up.
 */
export function startThreadLane(config: Config, options: ThreadLaneOptions): ThreadLane {
  return new ExtractionThread(config, options);
}

/** The entry matches this file's own extension: `.ts` from the sources (tsx), `.js` once compiled. */
const DEFAULT_ENTRY = new URL(`../app/thread-entry${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/**
 * Run with `eval`, so it loads the same way under `tsx src/app/main.ts`, `node --import
 * tsx`, bin/memgate.mjs (tsx registered through its API, nothing in execArgv) and
 * vitest. Node 20 does not apply an inherited `--import tsx` to a worker's own entry
 * ("Unknown file extension .ts", checked for all three), so the thread registers tsx
 * itself before importing the entry. Only dynamic imports: valid whether an inherited
 * `--input-type` makes the snippet CommonJS or ESM. A load failure is rethrown out of
 * a tick: the thread dies with an 'error' the lane logs.
 */
const BOOTSTRAP = `
import('node:worker_threads')
  .then(async ({ workerData: d }) => {
    if (d.loader) (await import(d.loader)).register();
    for (const preload of d.preloads) await import(preload);
    await import(d.entry);
  })
  .catch((err) => process.nextTick(() => { throw err; }));
`;

interface Call {
  resolve: (report: ExtractionReport) => void;
  reject: (err: MemgateError) => void;
}

/**
 * Why the thread serves runs rather than owning a job bus: the gateway's own
 * InProcessJobBus keeps doing what it is tested for (one pending job per user,
 * retries, dead letters, `depth()` for /metrics) and its consumer hands each job
 * to `run`. So a crash loses no queued job (none ever left the gateway) and the
 * jobs in flight fail retryably and are redelivered; nothing needs re-publishing.
 * Flushes are runs too: every extraction of the process takes the thread's user
 * lock, the one lock there is.
 */
class ExtractionThread implements ThreadLane {
  private readonly data: ThreadLaneData;
  private readonly execArgv: string[];
  private readonly log: Logger;
  private readonly calls = new Map<number, Call>();
  /** Runs posted while no thread is up (between a crash and its restart). */
  private readonly backlog: ToThread[] = [];
  private readonly counters: Omit<ThreadLaneStats, 'cpuMs'> = { threadId: null, runsDone: 0, runsFailed: 0, restarts: 0, tid: null, niceness: null, policy: null, textsEncoded: 0 };
  private worker: Worker | null = null;
  private nextId = 1;
  /** Crashes since the last thread that came up: a thread that cannot even start is retried with backoff. */
  private crashes = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private closing: Promise<void> | null = null;
  private readonly up: Promise<void>;
  private readonly encoderDuty: DutyCycle;
  private readonly cpu: CpuBudget;
  /** Time the lent encoder spent on the thread's texts, in ms (counted against cpuShare). */
  private encoderMs = 0;
  private markUp!: () => void;

  constructor(
    config: Config,
    private readonly options: ThreadLaneOptions,
  ) {
    this.log = options.logger.child({ component: 'thread-lane' });
    this.up = new Promise<void>((resolve) => (this.markUp = resolve));
    this.encoderDuty = new DutyCycle(options.encodeShare ?? 1);
    // The lane's CPU: the thread's busy time and the lent encoder's time spent on its texts.
    this.cpu = new CpuBudget(options.cpuShare ?? 1, () => this.cpuMs());
    const entry = (options.entry ?? DEFAULT_ENTRY).href;
    const { execArgv, preloads } = threadExecArgv(process.execArgv);
    this.data = { config, loader: threadLoaderFor(entry, 'extraction thread'), entry, preloads, encoderLent: options.encode !== undefined, removalsLent: options.removeTurns !== undefined };
    this.execArgv = execArgv;
    this.spawn();
  }

  run(scope: Scope, maxWaitMs: number, mode: SemanticMode = 'now', paced = true): Promise<ExtractionReport> {
    if (this.closing) return Promise.reject(new MemgateError('unavailable', 'extraction thread is stopping'));
    const trace = activeSpanContext();
    if (!paced) return this.post(scope, maxWaitMs, mode, trace);
    return this.cpu.admit().then(() => this.post(scope, maxWaitMs, mode, trace));
  }

  private post(scope: Scope, maxWaitMs: number, mode: SemanticMode, trace: ReturnType<typeof activeSpanContext>): Promise<ExtractionReport> {
    if (this.closing) return Promise.reject(new MemgateError('unavailable', 'extraction thread is stopping'));
    const id = this.nextId++;
    return new Promise<ExtractionReport>((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      // A copy: the caller's scope may carry more than the three ids (and must stay cloneable).
      const message: ToThread = { kind: 'run', id, scope: { tenantId: scope.tenantId, agentId: scope.agentId, userId: scope.userId }, maxWaitMs, mode, trace };
      if (this.worker) this.worker.postMessage(message);
      else this.backlog.push(message);
    });
  }

  ready(): Promise<void> {
    return this.up;
  }

  stats(): ThreadLaneStats {
    return { ...this.counters, cpuMs: Math.round(this.cpuMs()) };
  }

  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private spawn(): void {
    this.restartTimer = null;
    // Posted messages queue in the port until the thread listens, so runs need not wait for 'ready'.
    const worker = new Worker(BOOTSTRAP, { eval: true, workerData: this.data, execArgv: this.execArgv });
    this.worker = worker;
    worker.on('message', (message: FromThread) => this.onMessage(message, worker));
    worker.on('error', (err) => this.log.error('extraction thread crashed', { err }));
    worker.once('exit', (code) => this.onExit(worker, code));
    for (const message of this.backlog.splice(0)) worker.postMessage(message);
  }

  private onMessage(message: FromThread, worker: Worker): void {
    switch (message.kind) {
      case 'encode':
        void this.answer(worker, message.id, () => this.encode(message.texts));
        return;
      case 'remove': {
        const remove = this.options.removeTurns;
        void this.answer(worker, message.id, async () => {
          if (!remove) throw new MemgateError('internal', 'the gateway does not remove turns for the extraction thread');
          await remove(message.scope, message.turnIds);
          return undefined;
        });
        return;
      }
      case 'ready':
        // Loading the runtime is not the lane's work: the budget counts from here.
        this.cpu.reset();
        this.crashes = 0;
        this.counters.tid = message.tid;
        this.counters.niceness = message.niceness;
        this.counters.policy = message.policy;
        this.markUp();
        this.log.debug('extraction thread ready', { threadId: message.threadId });
        return;
      case 'event':
        this.options.events.publish(message.event);
        return;
      case 'done': {
        this.counters.runsDone++;
        this.counters.threadId = message.threadId;
        this.take(message.id)?.resolve(message.report);
        return;
      }
      case 'failed': {
        this.counters.runsFailed++;
        const { code, message: text, retryable } = message.error;
        this.take(message.id)?.reject(new MemgateError(code, text, { retryable }));
        return;
      }
      case 'close-failed':
        this.log.warn('extraction thread runtime close failed', { code: message.error.code, message: message.error.message });
        return;
    }
  }

  /**
   * A thread that ends without being asked to (uncaught error, out of memory) is
   * replaced. Its in-flight runs fail `unavailable` (retryable): the job bus
   * redelivers those jobs, and jobs still pending never left the gateway's bus.
   * Nothing is lost either way: turns leave the buffer only after their commit.
   */
  private onExit(worker: Worker, code: number): void {
    if (this.worker !== worker) return;
    this.worker = null;
    if (this.closing) return;
    this.rejectAll('extraction thread exited before the run finished');
    this.crashes++;
    this.counters.restarts++;
    const delayMs = this.crashes <= 1 ? 0 : Math.min(30_000, 250 * 2 ** (this.crashes - 2));
    this.log.error('extraction thread exited unexpectedly; restarting', { code, delayMs });
    this.restartTimer = setTimeout(() => this.spawn(), delayMs);
  }

  private async stop(): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    this.backlog.length = 0;
    const worker = this.worker;
    if (worker) {
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      worker.postMessage({ kind: 'stop' } satisfies ToThread);
      const timeoutMs = this.options.stopTimeoutMs ?? 10_000;
      const timer = setTimeout(() => {
        this.log.warn('extraction thread did not stop in time; terminating it', { timeoutMs, inFlight: this.calls.size });
        void worker.terminate();
      }, timeoutMs);
      await exited;
      clearTimeout(timer);
    }
    this.rejectAll('extraction thread stopped before the run finished');
    this.markUp();
  }

  private cpuMs(): number {
    return (this.worker?.performance.eventLoopUtilization().active ?? 0) + this.encoderMs;
  }

  /** The lent encoder on `texts`, chunk by chunk (see ENCODE_CHUNK). */
  private async encode(texts: string[]): Promise<Float32Array[]> {
    if (!this.options.encode) throw new MemgateError('internal', 'no sentence encoder was lent to the extraction thread');
    const vectors: Float32Array[] = [];
    const encode = this.options.encode;
    const timed = async (chunk: string[]) => {
      const started = performance.now();
      try {
        return await encode(chunk);
      } finally {
        this.encoderMs += performance.now() - started;
      }
    };
    for (let i = 0; i < texts.length; i += ENCODE_CHUNK) vectors.push(...(await this.encoderDuty.run(() => timed(texts.slice(i, i + ENCODE_CHUNK)))));
    this.counters.textsEncoded += texts.length;
    return vectors;
  }

  /** Answer one of the thread's requests with what `work` gives (vectors, or none) or why it failed. */
  private async answer(worker: Worker, id: number, work: () => Promise<Float32Array[] | undefined>): Promise<void> {
    let reply: ToThread;
    try {
      const vectors = await work();
      reply = vectors ? { kind: 'answered', id, vectors } : { kind: 'answered', id };
    } catch (err) {
      const e = toMemgateError(err);
      reply = { kind: 'refused', id, error: { code: e.code, message: e.message, retryable: e.retryable } };
    }
    // A thread that died meanwhile is gone with its request; its run is redelivered.
    if (this.worker === worker) worker.postMessage(reply);
  }

  private take(id: number): Call | undefined {
    const call = this.calls.get(id);
    this.calls.delete(id);
    return call;
  }

  private rejectAll(reason: string): void {
    for (const call of this.calls.values()) call.reject(new MemgateError('unavailable', reason));
    this.calls.clear();
  }
}
