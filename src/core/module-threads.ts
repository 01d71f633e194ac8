/**
 * Starting a worker thread on a module of this code base, the same way under
 * `tsx src/app/main.ts`, `node --import tsx`, bin/memgate.mjs (tsx registered through its
 * API, nothing in execArgv), vitest and the compiled `dist/`. Node 20 does not apply an
 * inherited `--import tsx` to a worker's own entry ("Unknown file extension .ts", checked
 * for all three), so a thread whose entry is a `.ts` file registers tsx itself, from the
 * loader URL given here, before importing it; the parent's tsx flags are dropped so it
 * is never registered twice. Used by the extraction thread and the embed thread.
 */
import { MemgateError } from './errors.ts';

/** Loader flags: dropped when they name tsx (the thread registers it itself, never twice). */
const LOADER_FLAG = /^(--import|--require|-r|--loader|--experimental-loader)$/;
const LOADER_FLAG_WITH_VALUE = /^--(import|require|loader|experimental-loader)=/;
/** The parent's inline script (`node -e`) is not the thread's. */
const EVAL_FLAG = /^(-e|--eval|-p|--print)$/;
const EVAL_FLAG_WITH_VALUE = /^--(eval|print)=/;

/** tsx's registration API when `entry` is TypeScript (a thread loads it before its entry), else null. */
export function threadLoaderFor(entry: string, what: string): string | null {
  if (!entry.endsWith('.ts')) return null;
  try {
    return import.meta.resolve('tsx/esm/api');
  } catch (err) {
    throw new MemgateError('unavailable', `cannot run the ${what}: tsx is not resolvable`, { cause: err, retryable: false });
  }
}

/** The process's Node options (inherited as Node does by default) minus tsx loaders and inline scripts; its other `--import`s apart, as preloads. */
export function threadExecArgv(argv: readonly string[]): { execArgv: string[]; preloads: string[] } {
  const kept: string[] = [];
  const preloads: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = argv[i + 1];
    if (EVAL_FLAG.test(arg) || (LOADER_FLAG.test(arg) && next?.includes('tsx'))) i++;
    // Another `--import`: the bootstrap imports it (an eval worker would not), so it leaves the flags.
    else if (arg === '--import' && next !== undefined) preloads.push(argv[++i]!);
    else if (arg.startsWith('--import=') && !arg.includes('tsx')) preloads.push(arg.slice('--import='.length));
    else if (!EVAL_FLAG_WITH_VALUE.test(arg) && !(LOADER_FLAG_WITH_VALUE.test(arg) && arg.includes('tsx'))) kept.push(arg);
  }
  return { execArgv: kept, preloads };
}
