import { BUSY_TIMEOUT_MS, onClose, type Database } from './database.ts';

interface Queued<A extends unknown[], R> {
  args: A;
  resolve: (value: R) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for one synchronous SQLite write (the turn append).
 *
 * A commit costs far more than the statements it carries: ~55 µs of CPU for one
 * append alone against ~16 µs each when 64 share a transaction (measured, file
 * database), because every commit writes its dirty pages to the WAL. So when a
 * burst arrives (uWS dispatches every message of one poll before the loop moves
 * on), the writes share one transaction. Measured over WebSocket (1,000 calls,
 * closed loop): main-thread CPU per ack fell from ~100–140 µs to ~60–80 µs and
 * acks/s rose ~1.5x; at 1,000 turns/s, where bursts are rare, latency is unchanged.
 *
 * The rule, chosen so that an idle server pays nothing and synchronous callers
 * keep synchronous results:
 * - the first write of an event-loop iteration commits at once, in its own
 *   transaction, and returns its result itself (no Promise, no microtask hop);
 * - so does every further write made in the same synchronous run as the previous
 *   one (a loop in one call stack: the caller may be reading the results as it goes);
 * - a write from another callback of the same iteration (uWS drains microtasks
 *   between the messages it dispatches, which is how "another callback" is told
 *   apart) opens a group instead; it and every write after it until the group
 *   commits are queued and resolve, in call order, after ONE transaction committed
 *   at `setImmediate`, i.e. right after the poll phase that delivered them.
 * Order is never changed: while a group is open every write joins it, and the
 * owner's other operations on the same data commit the group first (`flush`).
 *
 * Each result still means "committed": a queued write resolves only after its
 * group's COMMIT returned. If one write of a group throws, the whole transaction
 * rolls back and each write is retried alone, so only the bad one fails.
 *
 * Waiting for the write lock: another connection (the extraction thread) holds it for
 * ~1 ms at a time. SQLite's busy handler would sleep 1, 2, 5, 10 ms … between tries, so
 * an append that met one such transaction waited 3–8 ms and sat in the ack p99. Here the
 * transaction starts with no busy wait and, while the lock is taken, is retried every
 * `LOCK_POLL_MS` (a real sleep, Atomics.wait: the lock holder gets the core) until the
 * connection's usual busy timeout. A busy error comes only at BEGIN IMMEDIATE, before any
 * statement ran, so a retry repeats nothing.
 */
export class GroupCommit<A extends unknown[], R> {
  private readonly one: (...args: A) => R;
  private readonly many: (queued: readonly Queued<A, R>[]) => R[];
  private queue: Queued<A, R>[] | null = null;
  /** A write committed in this iteration (cleared at setImmediate). */
  private committedThisIteration = false;
  /** A write committed in the current synchronous run (cleared at the next microtask checkpoint). */
  private inSyncRun = false;
  private readonly endIteration = () => void (this.committedThisIteration = false);
  private readonly endSyncRun = () => void (this.inSyncRun = false);
  private readonly commitQueued = () => this.flush();

  /** `write` runs inside an IMMEDIATE transaction, alone or with the rest of its group. */
  constructor(db: Database, write: (...args: A) => R) {
    const one = db.transaction(write).immediate;
    const many = db.transaction((queued: readonly Queued<A, R>[]) => queued.map((q) => write(...q.args))).immediate;
    const prompt = promptLock(db);
    this.one = (...args) => prompt(() => one(...args));
    this.many = (queued) => prompt(() => many(queued));
    // A group still open when the connection closes is committed, not dropped.
    onClose(db, () => this.flush());
  }

  /** Commit `args` now (result) or with the iteration's group (Promise of the result); see the class comment. */
  run(...args: A): R | Promise<R> {
    if (this.queue === null && (!this.committedThisIteration || this.inSyncRun)) {
      const result = this.one(...args);
      if (!this.committedThisIteration) {
        this.committedThisIteration = true;
        setImmediate(this.endIteration);
      }
      if (!this.inSyncRun) {
        this.inSyncRun = true;
        queueMicrotask(this.endSyncRun);
      }
      return result;
    }
    return new Promise<R>((resolve, reject) => {
      if (this.queue === null) {
        this.queue = [];
        setImmediate(this.commitQueued);
      }
      this.queue.push({ args, resolve, reject });
    });
  }

  /**
   * Commit the open group now, if any. The owner calls it before its other
   * operations on the same data (so they apply in call order), and it runs at
   * close. It also ends the burst: the next write commits on its own again.
   */
  flush(): void {
    this.committedThisIteration = false;
    const queued = this.queue;
    if (queued === null) return;
    this.queue = null;
    let results: R[];
    try {
      results = this.many(queued);
    } catch {
      // The group rolled back as a whole: retry each write alone so one bad write fails alone.
      for (const q of queued) {
        try {
          q.resolve(this.one(...q.args));
        } catch (err) {
          q.reject(err);
        }
      }
      return;
    }
    for (let i = 0; i < queued.length; i++) queued[i]!.resolve(results[i]!);
  }
}

/** How often a write retries while another connection holds the write lock. */
const LOCK_POLL_MS = 0.2;
const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

/** `run` with SQLite's coarse busy sleeps replaced by a fine poll (see GroupCommit). */
function promptLock(db: Database): <T>(run: () => T) => T {
  const noWait = db.prepare(`PRAGMA busy_timeout = 0`);
  const usual = db.prepare(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  return (run) => {
    noWait.get();
    try {
      const deadline = performance.now() + BUSY_TIMEOUT_MS;
      for (;;) {
        try {
          return run();
        } catch (err) {
          if (!String((err as { code?: unknown }).code).startsWith('SQLITE_BUSY') || performance.now() > deadline) throw err;
          Atomics.wait(SLEEPER, 0, 0, LOCK_POLL_MS);
        }
      }
    } finally {
      usual.get();
    }
  };
}
