import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { registerCallPathWorker } from '../../core/call-path-threads.ts';

/** Tuning of the WAL checkpointer thread. */
export interface CheckpointerOptions {
  /** Pause between checkpoint ticks. */
  intervalMs: number;
  /** Extra PASSIVE passes per tick to catch up with a busy writer (each copies what the previous one missed). */
  catchUpPasses: number;
  /**
   * WAL size from which a tick ends with RESTART: it holds the write lock while it
   * copies the last frames and rewinds the log. Only reached when appends are so
   * dense that no pass ever catches up; otherwise passes never block the writer.
   */
  restartWalBytes: number;
  /** How long RESTART / TRUNCATE wait for the write lock before settling for a PASSIVE pass. */
  busyTimeoutMs: number;
  /**
   * The file the call path appends to: its RESTART can make an append wait, so the thread
   * registers as a call-path thread and keeps the gateway's scheduling policy (a helper
   * sweep would otherwise put it under SCHED_IDLE, where it could hold that lock starved).
   */
  callPath?: boolean;
}

/**
 * Chosen by measurement (1,000 WS calls at 1,000 turns/s and at saturation, file
 * database): 250 ms keeps each pass small (a 1 s interval made 30–50 ms passes
 * whose I/O slowed the writer's commits); catch-up passes let SQLite rewind the
 * WAL by itself at that rate (no RESTART needed, WAL ≤ ~20 MB); a 16 MB RESTART
 * threshold stalled the writer more often than 64 MB for no latency gain.
 */
export const DEFAULT_CHECKPOINTER: Readonly<CheckpointerOptions> = {
  intervalMs: 250,
  catchUpPasses: 10,
  restartWalBytes: 64 * 1024 * 1024,
  busyTimeoutMs: 100,
};

/**
 * The thread's code, plain CommonJS run with `eval` so it loads the same way under
 * node, tsx and vitest (a `.ts` worker file needs a loader the thread may not have).
 *
 * A PASSIVE pass copies committed WAL frames into the database file and fsyncs
 * without taking the writer's lock. SQLite rewinds the WAL at the next commit
 * only if a pass has copied all of it by then, so a tick repeats passes (each
 * copies only what was committed during the previous one) until one finds
 * nothing new. Then:
 * - nothing committed since the last tick and all copied (idle): TRUNCATE gives
 *   the disk space back; it is instant since nothing is left to copy;
 * - still behind and the WAL past `restartWalBytes` (appends never pause):
 *   RESTART, the only step that makes the writer wait (for the last few frames).
 * A failing pass throws out of the timer: the thread dies and the main connection
 * takes its auto-checkpoint back (see WalCheckpointer).
 */
const WORKER_SOURCE = `
const { parentPort, workerData: w } = require('node:worker_threads');
if (w.callPath) {
  let tid = null;
  try {
    tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()) || null;
  } catch {}
  parentPort.postMessage({ tid });
}
const Database = require(w.driver);
const db = new Database(w.path, { timeout: w.busyTimeoutMs });
db.pragma('synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 0');
const frameBytes = db.pragma('page_size', { simple: true }) + 24;
const pass = (mode) => db.pragma('wal_checkpoint(' + mode + ')')[0];
let lastLog = -1;
let timer = null;
const tick = () => {
  let r = pass('PASSIVE');
  if (r.log === lastLog) {
    if (r.log > 0) r = pass('TRUNCATE');
  } else {
    const tooBig = () => r.log * frameBytes > w.restartWalBytes;
    for (let i = 0; i < w.catchUpPasses && r.log !== lastLog && !tooBig(); i++) {
      lastLog = r.log;
      r = pass('PASSIVE');
    }
    if (tooBig()) {
      r = pass('RESTART');
      // busy = 0: the log was copied and rewound (busy = 1: the writer kept the lock past busyTimeoutMs).
      if (r.busy === 0) parentPort.postMessage('rewound');
    }
  }
  lastLog = r.log;
  timer = setTimeout(tick, w.intervalMs);
};
timer = setTimeout(tick, w.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearTimeout(timer);
  db.close();
  parentPort.close();
});
`;

const driverPath = createRequire(import.meta.url).resolve('better-sqlite3');

/**
 * Runs WAL checkpoints on a worker thread with its own connection to the file, so
 * the event loop does not stall on them. SQLite's default auto-checkpoint (every
 * 1,000 WAL pages, ~4 times a second at 1,000 turns/s) copies the WAL back and
 * fsyncs twice inside the committing append: measured, it made the main thread
 * spend ~0.7 s per 13 s in commits slower than 2 ms (max ~25 ms) and put append
 * p99 at ~15 ms; with this thread ~0.03–0.2 s, p99 ~5–7 ms.
 * The main connection sets `wal_autocheckpoint = 0` while the thread is alive and
 * gets it back (`onFailure`) if the thread dies, so the WAL never grows unchecked.
 */
export class WalCheckpointer {
  /** Settles once the thread has exited (its connection closed). */
  readonly exited: Promise<void>;
  /** RESTARTs that rewound the WAL under a writer that never paused (observability and tests). */
  rewinds = 0;
  private readonly worker: Worker;
  private stopping = false;

  constructor(path: string, options: CheckpointerOptions, onFailure: (reason: string) => void) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver: driverPath, path, ...options } });
    // A checkpointer never keeps a process alive: an unclosed database is recovered from its WAL.
    this.worker.unref();
    let reason = 'checkpointer thread exited';
    this.worker.on('error', (err) => (reason = err.message));
    const tidOf = options.callPath ? registerCallPathWorker(this.worker) : () => undefined;
    this.worker.on('message', (m: unknown) => {
      if (m === 'rewound') this.rewinds++;
      else if (typeof m === 'object' && m !== null && 'tid' in m) tidOf((m as { tid: number | null }).tid);
    });
    this.exited = new Promise((resolve) => {
      this.worker.once('exit', () => {
        if (!this.stopping) onFailure(reason);
        resolve();
      });
    });
  }

  /** Ask the thread to close its connection and exit (idempotent); resolves on exit. */
  stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.worker.postMessage('stop');
    }
    return this.exited;
  }
}
