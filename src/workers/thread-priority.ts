import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** What `lowerThreadPriority` achieved: the kernel thread id and its nice value read back, or why not. */
export interface ThreadPriority {
  /** Kernel thread id (Linux), or null where threads have none we can name. */
  tid: number | null;
  /** The thread's nice value as the kernel reports it after the change, or null when unknown. */
  niceness: number | null;
  /** The thread's scheduling policy as the kernel reports it ('idle': SCHED_IDLE), or null when unknown. */
  policy: 'idle' | 'normal' | 'other' | null;
  /** Why the priority could not be lowered (the thread then runs at the gateway's priority). */
  error?: string;
}

/**
 * Lower the calling thread's scheduling priority by `by` nice steps (capped at 19), so the
 * OS runs the gateway's call path first whenever both want a core. On Linux nice is per
 * thread: setpriority on the kernel thread id touches this thread only, never the gateway's.
 * Elsewhere (no /proc/thread-self) it does nothing and says why: extraction still runs.
 */
export async function lowerThreadPriority(by: number, idle = false): Promise<ThreadPriority> {
  let tid: number;
  try {
    tid = currentThreadTid();
  } catch (err) {
    return { tid: null, niceness: null, policy: null, error: `no per-thread priority here: ${(err as Error).message}` };
  }
  const errors: string[] = [];
  if (by > 0) {
    try {
      // Relative to what the thread inherited, so a gateway started under `nice` keeps its lead.
      setPriority(tid, Math.min(19, getPriority(tid) + by));
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  if (idle) {
    const why = await toIdlePolicy(tid);
    if (why) errors.push(why);
  }
  const stat = threadStat(tid);
  return { tid, niceness: stat.niceness, policy: stat.policy, ...(errors.length > 0 ? { error: errors.join('; ') } : {}) };
}

/**
 * Put a thread of this process under SCHED_IDLE: the kernel runs it only on a core that
 * nothing else wants, and a waking normal thread preempts it at once (a niced thread keeps
 * its slice first). Node has no sched_setattr, so this asks util-linux's `chrt`, which any
 * user may use to lower a thread of its own; returns why not, or null.
 */
function toIdlePolicy(tid: number): Promise<string | null> {
  return new Promise((resolve) => execFile('chrt', ['--idle', '--pid', '0', String(tid)], { timeout: 5_000 }, (err, _out, stderr) => resolve(err ? `chrt: ${stderr.trim() || err.message}` : null)));
}

/**
 * Put this process's helper threads under SCHED_IDLE: every thread but the calling one
 * (the gateway's event loop) and `keep` (the call-path threads: the embed thread, the
 * turns file's checkpointer) that is not idle already: V8's platform workers (concurrent
 * and parallel GC, background compiles), libuv's pool, the memory file's checkpointer.
 * Threads started later inherit their creator's policy. Why (BENCHMARKS.md, SCHED_IDLE):
 * with only the extraction thread idle, the hashing lane's ack p99 was 1.26–2.13 ms in six
 * 10 s runs; with the helpers idle too, 0.93–1.37 ms in six interleaved runs. Returns the
 * threads changed and, where some could not be, why (a thread that ended meanwhile is not).
 */
export async function idleHelperThreads(keep: ReadonlySet<number>): Promise<{ tids: number[]; error?: string }> {
  const tids: number[] = [];
  const errors: string[] = [];
  let self: number;
  let all: string[];
  try {
    self = currentThreadTid();
    all = readdirSync('/proc/self/task');
  } catch (err) {
    return { tids, error: `no per-thread policy here: ${(err as Error).message}` };
  }
  for (const name of all) {
    const tid = Number(name);
    if (tid === self || keep.has(tid) || threadStat(tid).policy === 'idle') continue;
    // One at a time and asynchronously: the event loop keeps acking meanwhile.
    const why = await toIdlePolicy(tid);
    if (!why) tids.push(tid);
    else if (existsSync(`/proc/self/task/${tid}`)) errors.push(why);
  }
  return { tids, ...(errors.length > 0 ? { error: [...new Set(errors)].join('; ') } : {}) };
}

/** The calling thread's kernel id: /proc/thread-self links to "PID/task/TID". */
export function currentThreadTid(): number {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (!Number.isInteger(tid) || tid <= 0) throw new Error('/proc/thread-self does not name a thread');
  return tid;
}

/** Nice value (field 19 of its stat) and scheduling policy (field 41) of a thread of this process, read from /proc; null when unreadable. */
export function threadStat(tid: number): Pick<ThreadPriority, 'niceness' | 'policy'> {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const nice = Number(fields[19 - 3]);
    const policy = Number(fields[41 - 3]);
    return { niceness: Number.isInteger(nice) ? nice : null, policy: policy === 5 ? 'idle' : policy === 0 ? 'normal' : Number.isInteger(policy) ? 'other' : null };
  } catch {
    return { niceness: null, policy: null };
  }
}
