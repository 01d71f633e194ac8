import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { registerCallPathWorker } from '../../core/call-path-threads.ts';
import { MemgateError } from '../../core/errors.ts';
import { threadExecArgv, threadLoaderFor } from '../../core/module-threads.ts';
import { INT8_RUNNER_MODULE, MISSING_PACKAGES, splitFlat, USE_LITE_PACKAGES, type LoadedUseLite, type UseLiteModel, type UseLiteRuntime } from './model.ts';
import { RUNNER_SOURCE } from './runner.ts';

/**
 * The embed thread's code, run with `eval` (see checkpointer.ts for why). Only dynamic
 * imports at the top, `require` made with createRequire: valid whether an inherited
 * `--input-type` makes the snippet CommonJS or ESM (see thread-lane.ts). It loads the
 * model: the int8 runner's module by URL (tsx registered first for a `.ts` one, see
 * core/module-threads.ts), or TF.js's runner source with the packages required by resolved
 * path (an eval'd thread resolves bare names from the working directory). It says
 * `ready`, then answers each `embed` with
 * one flat Float32Array whose buffer is transferred, not copied. Messages are handled
 * one at a time, so a batch holds only this thread. `crash` is the tests' way to kill it.
 */
const WORKER_SOURCE = `
Promise.all([import('node:worker_threads'), import('node:module')])
  .then(([{ parentPort, workerData: w }, { createRequire }]) => {
    const require = createRequire(w.anchor);
    let tid = null;
    try {
      tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()) || null;
    } catch {}
    parentPort.postMessage({ op: 'tid', tid });
    const started = performance.now();
    let runner = null;
    const load = w.module
      ? Promise.resolve()
          .then(() => (w.loader ? import(w.loader).then((l) => l.register()) : undefined))
          .then(() => import(w.module))
          .then((m) => m.loadRunner())
      : new Function('require', w.runner)((id) => require(w.paths[id]));
    load.then(
      (r) => {
        runner = r;
        parentPort.postMessage({ op: 'ready', loadMs: performance.now() - started });
      },
      (err) => parentPort.postMessage({ op: 'failed', message: String((err && err.message) || err), missing: Boolean(err && err.code === 'MODULE_NOT_FOUND') }),
    );
    parentPort.on('message', (m) => {
      if (m.op === 'crash') throw new Error('embed thread crashed on request (test hook)');
      Promise.resolve()
        .then(() => runner.embed(m.texts))
        .then(
          (flat) => parentPort.postMessage({ op: 'vectors', id: m.id, flat }, [flat.buffer]),
          (err) => parentPort.postMessage({ op: 'error', id: m.id, message: String((err && err.message) || err) }),
        );
    });
  })
  .catch((err) => process.nextTick(() => { throw err; }));
`;

/** Young generation of the int8 embed thread's heap, in MiB. */
const INT8_YOUNG_GENERATION_MB = 2;

type FromThread =
  | { op: 'tid'; tid: number | null }
  | { op: 'ready'; loadMs: number }
  | { op: 'failed'; message: string; missing: boolean }
  | { op: 'vectors'; id: number; flat: Float32Array }
  | { op: 'error'; id: number; message: string };

interface InFlight {
  count: number;
  resolve(vectors: Float32Array[]): void;
  reject(err: unknown): void;
}

/** One running thread: its model load, and the calls waiting for its answers. */
class EmbedThread {
  readonly loaded: Promise<number>;
  private readonly worker: Worker;
  private readonly inFlight = new Map<number, InFlight>();
  private nextId = 1;
  private error: string | null = null;
  private exited = false;

  constructor(
    runtime: UseLiteRuntime,
    private readonly onExit: (thread: EmbedThread) => void,
  ) {
    const workerData =
      runtime === 'int8'
        ? { module: INT8_RUNNER_MODULE.href, loader: threadLoaderFor(INT8_RUNNER_MODULE.href, 'embed thread'), anchor: import.meta.url }
        : { paths: tfjsPackagePaths(), anchor: import.meta.url, runner: RUNNER_SOURCE };
    // The int8 encoder makes little garbage (piece ids, views); V8's default young generation
    // would still grow to ~16 MiB on its load and stay resident. 2 MiB: measured ~6 MiB less RSS.
    const resourceLimits = runtime === 'int8' ? { maxYoungGenerationSizeMb: INT8_YOUNG_GENERATION_MB } : {};
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData, execArgv: threadExecArgv(process.execArgv).execArgv, resourceLimits });
    // Referenced only while a call waits for it (see track): idle, it never keeps a process alive.
    this.worker.unref();
    // The embed thread answers queries: a sweep of helper threads to SCHED_IDLE leaves it alone.
    const tidOf = registerCallPathWorker(this.worker);
    this.loaded = new Promise((resolve, reject) => {
      this.worker.on('message', (m: FromThread) => {
        if (m.op === 'tid') tidOf(m.tid);
        else if (m.op === 'ready') resolve(m.loadMs);
        else if (m.op === 'failed') {
          reject(new MemgateError('internal', m.missing ? MISSING_PACKAGES : `use-lite embedder: loading the model failed: ${m.message}`, { retryable: false }));
          void this.stop();
        } else this.settle(m);
      });
      this.worker.on('error', (err) => (this.error = err.message));
      this.worker.once('exit', (code) => {
        this.exited = true;
        const why = new MemgateError('unavailable', `use-lite embed thread exited (code ${code}${this.error ? `: ${this.error}` : ''}); the next call starts a new one`);
        reject(why);
        for (const call of this.inFlight.values()) call.reject(why);
        this.inFlight.clear();
        this.onExit(this);
      });
    });
    this.loaded.catch(() => undefined);
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    await this.loaded;
    if (this.exited) throw new MemgateError('unavailable', 'use-lite embed thread exited; the next call starts a new one');
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.inFlight.set(id, { count: texts.length, resolve, reject });
      if (this.inFlight.size === 1) this.worker.ref();
      this.worker.postMessage({ op: 'embed', id, texts });
    });
  }

  crash(): void {
    this.worker.postMessage({ op: 'crash' });
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }

  private settle(m: Extract<FromThread, { id: number }>): void {
    const call = this.inFlight.get(m.id);
    if (!call) return;
    this.inFlight.delete(m.id);
    if (this.inFlight.size === 0) this.worker.unref();
    if (m.op === 'error') call.reject(new MemgateError('internal', `use-lite embedder: embedding failed: ${m.message}`, { retryable: false }));
    else {
      try {
        call.resolve(splitFlat(m.flat, call.count));
      } catch (err) {
        call.reject(err);
      }
    }
  }
}

/** The running embed thread of each runtime (one in practice: the configured one). */
const running = new Map<UseLiteRuntime, EmbedThread>();
const holders = new Map<UseLiteRuntime, number>();
let packagePaths: Record<string, string> | null = null;

function tfjsPackagePaths(): Record<string, string> {
  if (!packagePaths) {
    const require = createRequire(import.meta.url);
    try {
      packagePaths = Object.fromEntries(USE_LITE_PACKAGES.map((p) => [p, require.resolve(p)]));
    } catch (err) {
      throw new MemgateError('internal', MISSING_PACKAGES, { cause: err, retryable: false });
    }
  }
  return packagePaths;
}

function thread(runtime: UseLiteRuntime): EmbedThread {
  const current = running.get(runtime);
  if (current) return current;
  const started = new EmbedThread(runtime, (t) => {
    if (running.get(runtime) === t) running.delete(runtime);
  });
  running.set(runtime, started);
  // A failed load is not kept: the next call starts a fresh thread, as the in-process loader retries.
  started.loaded.catch(() => {
    if (running.get(runtime) === started) running.delete(runtime);
  });
  return started;
}

/** A claim on the process's one embed thread; the thread stops when the last claim is released. */
export interface UseLiteThreadLease {
  /** The model, run in the embed thread (started lazily, restarted after a crash). */
  model: UseLiteModel;
  /** Start the thread and load the model now; the same `LoadedUseLite` shape as `loadUseLite`. */
  load(): Promise<LoadedUseLite>;
  /** Give the claim back (idempotent); the last one stops the thread. */
  release(): Promise<void>;
}

/**
 * USE-lite on a dedicated worker thread, one per process, so a model call (10–100 ms of
 * synchronous wasm) never holds the event loop that acks appends: the loop only posts
 * texts and receives vectors. Started with the first embed or `load()`; a thread that
 * dies (crash, failed load) rejects its in-flight calls with `unavailable` and the next
 * call starts a new one. Idle, the thread is unreferenced (never keeps a process alive).
 */
export function leaseUseLiteThread(runtime: UseLiteRuntime = 'int8'): UseLiteThreadLease {
  holders.set(runtime, (holders.get(runtime) ?? 0) + 1);
  let released = false;
  // A released lease never starts a thread again: one nobody holds would never be stopped.
  const live = (): EmbedThread => {
    if (released) throw new MemgateError('unavailable', 'use-lite embedder closed');
    return thread(runtime);
  };
  const model: UseLiteModel = { embed: async (texts) => live().embed(texts) };
  return {
    model,
    async load() {
      return { model, loadMs: await live().loaded };
    },
    async release() {
      if (released) return;
      released = true;
      const left = (holders.get(runtime) ?? 1) - 1;
      holders.set(runtime, left);
      const t = running.get(runtime);
      if (left === 0 && t) {
        running.delete(runtime);
        await t.stop();
      }
    },
  };
}

/** Tests only: make the running embed threads throw, as a crash in the model would. */
export function crashUseLiteThreadForTests(): void {
  for (const t of running.values()) t.crash();
}

/** Whether an embed thread is running (or starting) in this process: diagnostics and tests. */
export function useLiteThreadRunning(): boolean {
  return running.size > 0;
}
