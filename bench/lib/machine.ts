import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, release, platform } from 'node:os';

/** The machine a run came from: printed in the summary and stored with every result. */
export interface MachineInfo {
  cpuModel: string;
  /** `nproc`: cores this process may use. */
  nproc: number;
  ramGiB: number;
  node: string;
  os: string;
  /** `git rev-parse HEAD` plus "-dirty" when the tree has changes, or "unknown". */
  commit: string;
  /** 1-minute load average when the run started: other work on the machine skews latency figures. */
  loadAvg1m: number;
}

/** Read the machine description (best effort: unknown parts say so). */
export function machineInfo(repoRoot: string): MachineInfo {
  let cpuModel = cpus()[0]?.model ?? 'unknown';
  try {
    const m = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m?.[1]) cpuModel = m[1].trim();
  } catch {
    // Not Linux: os.cpus() is good enough.
  }
  let nproc = cpus().length;
  try {
    nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim()) || nproc;
  } catch {
    // No coreutils: keep the os.cpus() count.
  }
  return {
    cpuModel,
    nproc,
    ramGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: `${platform()} ${release()}`,
    commit: gitCommit(repoRoot),
    loadAvg1m: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

function gitCommit(cwd: string): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== '';
    return dirty ? `${head}-dirty` : head;
  } catch {
    return 'unknown';
  }
}
