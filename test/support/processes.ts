/**
 * Child memgate processes for end-to-end tests: `node --import tsx src/app/main.ts <command>`
 * spawned from the repository root, with their output kept for diagnostics and a
 * stop that always ends (SIGTERM, then SIGKILL after a grace period).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { TEST_EMBEDDER } from './config.ts';

/** The repository root: children run from here so `config/` and `src/` resolve. */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** How a child ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running (or ended) memgate child process. */
export interface MemgateProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Every stdout and stderr line so far, in arrival order per stream. */
  readonly lines: string[];
  /** Settles once the process has exited. */
  readonly exited: Promise<ProcessExit>;
  /** Resolves with the first line (already seen or future) matching `re`; rejects on exit or timeout. */
  waitForLine(re: RegExp, timeoutMs: number): Promise<string>;
  /** The parsed JSON log lines (stderr) whose `msg` equals `msg`. */
  logs(msg: string): Array<Record<string, unknown>>;
  /** Sends `signal` and waits for the exit; SIGKILL after `graceMs` if it is still running. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<ProcessExit>;
}

/** Spawn options: environment additions and extra CLI arguments. */
export interface SpawnMemgateOptions {
  /** Label used in errors and diagnostics. */
  name: string;
  /** Added to a copy of this process's environment without its MEMGATE_* and NODE_OPTIONS entries. */
  env: Record<string, string>;
  /** Arguments after the command, e.g. `['--profile', 'loopback']`. */
  args: readonly string[];
}

/**
 * Spawns `memgate <command>` with `process.execPath` (never detached, so the
 * child cannot outlive a crashed test runner's process group by accident).
 */
export function spawnMemgate(command: 'serve' | 'worker', options: SpawnMemgateOptions): MemgateProcess {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    // The runner's own MEMGATE_* (or a loader in NODE_OPTIONS) must not leak into the child's config.
    if (!k.startsWith('MEMGATE_') && k !== 'NODE_OPTIONS') env[k] = v;
  }
  env['MEMGATE_EMBEDDER'] = TEST_EMBEDDER;
  Object.assign(env, options.env);
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/main.ts', command, ...options.args], {
    cwd: REPO_ROOT,
    env,
    detached: false,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const watchers = new Set<(line: string) => void>();
  const onData = (stream: NodeJS.ReadableStream) => {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        for (const w of watchers) w(line);
      }
    });
  };
  onData(child.stdout!);
  onData(child.stderr!);
  const exited = new Promise<ProcessExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let ended = false;
  void exited.then(() => {
    ended = true;
  });

  const waitForLine = (re: RegExp, timeoutMs: number) =>
    new Promise<string>((resolve, reject) => {
      const seen = lines.find((l) => re.test(l));
      if (seen !== undefined) return resolve(seen);
      const done = () => {
        clearTimeout(timer);
        watchers.delete(watch);
      };
      const watch = (line: string) => {
        if (!re.test(line)) return;
        done();
        resolve(line);
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${options.name}: no line matching ${re} within ${timeoutMs} ms; output:\n${tail(lines)}`));
      }, timeoutMs);
      watchers.add(watch);
      void exited.then((exit) => {
        if (!watchers.has(watch)) return;
        done();
        reject(new Error(`${options.name} exited (${exit.code ?? exit.signal}) before a line matching ${re}; output:\n${tail(lines)}`));
      });
    });

  return {
    name: options.name,
    child,
    lines,
    exited,
    waitForLine,
    logs: (msg) =>
      lines.flatMap((l) => {
        if (!l.startsWith('{')) return [];
        try {
          const rec = JSON.parse(l) as Record<string, unknown>;
          return rec['msg'] === msg ? [rec] : [];
        } catch {
          return [];
        }
      }),
    async stop(signal = 'SIGTERM', graceMs = 10_000) {
      if (!ended) child.kill(signal);
      const timer = setTimeout(() => {
        if (!ended) child.kill('SIGKILL');
      }, graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** The last lines of a child's output, for error messages. */
export function tail(lines: readonly string[], n = 30): string {
  return lines.slice(-n).join('\n');
}

/** Spawns `memgate serve` and waits for its `memgate listening on URL` line; returns the base URL. */
export async function startGatewayProcess(options: SpawnMemgateOptions, timeoutMs = 30_000): Promise<{ proc: MemgateProcess; url: string }> {
  const proc = spawnMemgate('serve', options);
  try {
    const line = await proc.waitForLine(/^memgate listening on /, timeoutMs);
    return { proc, url: line.replace(/^memgate listening on /, '').trim() };
  } catch (err) {
    await proc.stop('SIGKILL');
    throw err;
  }
}

/** Spawns `memgate worker` and waits for its `worker started` log line. */
export async function startWorkerProcess(options: SpawnMemgateOptions, timeoutMs = 30_000): Promise<MemgateProcess> {
  const proc = spawnMemgate('worker', options);
  try {
    await proc.waitForLine(/"msg":"worker started"/, timeoutMs);
    return proc;
  } catch (err) {
    await proc.stop('SIGKILL');
    throw err;
  }
}
