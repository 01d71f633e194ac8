/**
 * `memgate serve` with the embedded lane puts its helper threads (V8's GC workers, libuv's
 * pool, the memory file's WAL checkpointer, the extraction thread) under SCHED_IDLE once the
 * lane is up, and leaves the event loop, the embed thread (query embeddings) and the turns
 * file's checkpointer (its RESTART can make an append wait) at the normal policy.
 * Read straight from the kernel (/proc/PID/task/TID/stat, field 41: 5 = SCHED_IDLE, 0 = normal).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startGatewayProcess, type MemgateProcess } from '../support/processes.ts';
import { removeDir } from '../support/tmp.ts';
import { sleep } from '../support/wait.ts';

const linux = existsSync('/proc/thread-self') && spawnSync('chrt', ['--version']).status === 0;

function policies(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${name}/stat`, 'utf8');
      out.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[41 - 3]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

const started: Array<{ proc: MemgateProcess; dir: string }> = [];
afterEach(async () => {
  for (const { proc, dir } of started.splice(0)) {
    await proc.stop();
    removeDir(dir);
  }
});

async function serve(env: Record<string, string>): Promise<{ proc: MemgateProcess; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'memgate-threads-'));
  const { proc, url } = await startGatewayProcess({
    name: 'helper-threads',
    env: { MEMGATE_SQLITE_PATH: join(dir, 'memgate.db'), MEMGATE_LOG_LEVEL: 'debug', ...env },
    args: ['--port', '0', '--host', '127.0.0.1'],
  });
  started.push({ proc, dir });
  return { proc, url };
}

describe.runIf(linux)('helper threads under SCHED_IDLE (worker.idlePolicy)', () => {
  it('idles every thread but the event loop, the embed thread and the turns checkpointer once the lane is up', async () => {
    const { proc, url } = await serve({ MEMGATE_EMBEDDER: 'fused' });
    const pid = proc.child.pid!;
    await proc.waitForLine(/"msg":"helper threads under SCHED_IDLE"/, 30_000);
    // A search makes sure the embed thread exists (the model loads in the background at start).
    const r = await fetch(`${url}/v1/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agentId: 'a', userId: 'u', query: 'where does she want a flat' }),
    });
    expect(r.status).toBe(200);
    const now = policies(pid);
    expect(now.get(pid)).toBe(0);
    const normal = [...now].filter(([tid, policy]) => tid !== pid && policy === 0);
    expect(normal.length).toBe(2);
    expect([...now.values()].filter((p) => p === 5).length).toBeGreaterThanOrEqual(6);
    const [logged] = proc.logs('helper threads under SCHED_IDLE');
    expect(logged!['threads']).toBeGreaterThanOrEqual(5);
  });

  it('leaves every thread at the normal policy when worker.idlePolicy is false', async () => {
    const { proc } = await serve({ MEMGATE_WORKER_IDLE_POLICY: 'false' });
    const pid = proc.child.pid!;
    await proc.waitForLine(/"msg":"extraction thread ready"/, 30_000);
    // The sweep would have run right after that line: give it time to show.
    await sleep(1_000);
    expect([...policies(pid).values()].every((p) => p === 0)).toBe(true);
    expect(proc.logs('helper threads under SCHED_IDLE')).toHaveLength(0);
  });
});
