/**
 * Threads of this process that serve the call path besides the gateway's event loop (the
 * embed thread, which answers query embeddings; the turns file's checkpointer, whose
 * RESTART can make an append wait): a sweep that puts helper threads under
 * SCHED_IDLE (workers/thread-priority.ts) leaves these at the gateway's policy. Each entry
 * is a promise of the thread's kernel id (null when unknown), so a sweep can wait for a
 * thread that is still starting.
 */
import type { Worker } from 'node:worker_threads';

const threads: Array<Promise<number | null>> = [];

/** Register `worker` as a call-path thread; call the result with its kernel id once the thread says it (an exit first settles it as null). */
export function registerCallPathWorker(worker: Worker): (tid: number | null) => void {
  let settle: (tid: number | null) => void = () => undefined;
  threads.push(new Promise((resolve) => (settle = resolve)));
  worker.once('exit', () => settle(null));
  return (tid) => settle(tid);
}

/** Kernel ids of the call-path threads registered so far (waits for those still starting). */
export async function callPathTids(): Promise<Set<number>> {
  const tids = await Promise.all(threads);
  return new Set(tids.filter((t): t is number => t !== null));
}
