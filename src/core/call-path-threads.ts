/**
 * Threads of this process that serve the call path besides the gateway's event loop (the
 * embed thread, which answers query embeddings; the turns file's checkpointer, whose
 * RESTART can make an append wait): a sweep that puts helper threads under
 * SCHED_IDLE (workers/thread-priority.ts) leaves these at the gateway's policy. Each entry
 * is a promise of the thread's kernel id (null when unknown), so a sweep can wait for a
 * thread that is still starting.
 */
const threads: Array<Promise<number | null>> = [];

export function registerCallPathThread(tid: Promise<number | null>): void {
  threads.push(tid);
}

/** Kernel ids of the call-path threads registered so far (waits for those still starting). */
export async function callPathTids(): Promise<Set<number>> {
  const tids = await Promise.all(threads);
  return new Set(tids.filter((t): t is number => t !== null));
}
