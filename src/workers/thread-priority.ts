import { readFileSync, readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** What `lowerThreadPriority` achieved: the kernel thread id and its nice value read back, or why not. */
export interface ThreadPriority {
  /** Kernel thread id (Linux), or null where threads have none we can name. */
  tid: number | null;
  /** The thread's nice value as the kernel reports it after the change, or null when unknown. */
  niceness: number | null;
  /** Why the priority could not be lowered (the thread then runs at the gateway's priority). */
  error?: string;
}

/**
 * Lower the calling thread's scheduling priority by `by` nice steps (capped at 19), so the
 * OS runs the gateway's call path first whenever both want a core. On Linux nice is per
 * thread: setpriority on the kernel thread id touches this thread only, never the gateway's.
 * Elsewhere (no /proc/thread-self) it does nothing and says why: extraction still runs.
 */
export function lowerThreadPriority(by: number): ThreadPriority {
  let tid: number;
  try {
    tid = currentThreadTid();
  } catch (err) {
    return { tid: null, niceness: null, error: `no per-thread priority here: ${(err as Error).message}` };
  }
  if (by <= 0) return { tid, niceness: threadNiceness(tid) };
  try {
    // Relative to what the thread inherited, so a gateway started under `nice` keeps its lead.
    setPriority(tid, Math.min(19, getPriority(tid) + by));
    return { tid, niceness: threadNiceness(tid) };
  } catch (err) {
    return { tid, niceness: threadNiceness(tid), error: (err as Error).message };
  }
}

/** The calling thread's kernel id: /proc/thread-self links to "PID/task/TID". */
export function currentThreadTid(): number {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (!Number.isInteger(tid) || tid <= 0) throw new Error('/proc/thread-self does not name a thread');
  return tid;
}

/** Nice value of a thread of this process, read from /proc (field 19 of its stat), or null when unreadable. */
export function threadNiceness(tid: number): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const nice = Number(fields[19 - 3]);
    return Number.isInteger(nice) ? nice : null;
  } catch {
    return null;
  }
}
