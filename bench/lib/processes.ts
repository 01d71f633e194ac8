import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';

/** The repository root (bench/lib/../..). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Every child process the bench started and has not seen exit: killed when the bench exits. */
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** Register a child so it cannot outlive the bench (Ctrl-C, crash, or a suite that forgot it). */
export function ownChild(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Node arguments that run a TypeScript file through tsx without an extra npx process. */
export function tsxArgs(file: string, args: readonly string[] = []): string[] {
  return ['--import', 'tsx', file, ...args];
}

/** A server process the bench started and owns. */
export interface SpawnedServer {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Last few KB of the process's stderr (for error messages). */
  stderrTail(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

/** How to start a server and recognise that it listens. */
export interface SpawnOptions {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** First capture group = host, second = port, matched on stdout lines. */
  readyPattern?: RegExp;
  timeoutMs?: number;
}

const LISTENING = /listening on http:\/\/([^:\s/]+):(\d+)/;

/**
 * Spawn a server as its own process (never in the load generator's event loop) and
 * wait for its "listening on http://HOST:PORT" stdout line. Rejects with the stderr
 * tail when it exits or does not become ready in time.
 */
export function spawnServer(opts: SpawnOptions): Promise<SpawnedServer> {
  const child = ownChild(
    spawn(opts.command, opts.args, {
      cwd: opts.cwd ?? REPO_ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-4096);
  });
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  const stop = async (graceMs = 5000): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return new Promise<SpawnedServer>((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      void stop(500);
      reject(new Error(`${opts.name} did not print its listening line within ${opts.timeoutMs ?? 30_000} ms\n${tail}`));
    }, opts.timeoutMs ?? 30_000);
    const early = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      reject(new Error(`${opts.name} exited early (code ${code}, signal ${signal})\n${tail}`));
    };
    child.once('exit', early);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const m = (opts.readyPattern ?? LISTENING).exec(line);
      if (!m) return;
      clearTimeout(timer);
      child.off('exit', early);
      lines.removeAllListeners('line');
      // Keep draining stdout so a chatty server never blocks on a full pipe.
      child.stdout?.resume();
      resolvePromise({
        name: opts.name,
        host: m[1] ?? '127.0.0.1',
        port: Number(m[2]),
        pid: child.pid ?? -1,
        child,
        stderrTail: () => tail,
        stop,
      });
    });
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc; null off Linux. */
export async function cpuSeconds(pid: number): Promise<number | null> {
  try {
    const { readFile } = await import('node:fs/promises');
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return ticks / 100;
  } catch {
    return null;
  }
}
