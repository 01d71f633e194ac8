import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { WsTester, http } from './support/ws-tester.ts';
import { removeDir } from '../support/tmp.ts';
import { waitFor } from '../support/wait.ts';
import { TEST_EMBEDDER } from '../support/config.ts';

/**
 * `memgate serve` as a real child process: SIGTERM under load exits 0, and a
 * restart on the same data file holds every turn that was ever acked.
 */
const dir = mkdtempSync(join(tmpdir(), 'memgate-shutdown-'));
afterAll(() => removeDir(dir));

interface Served {
  child: ChildProcessByStdio<null, Readable, Readable>;
  base: string;
  firstLine: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

async function serve(dbPath: string): Promise<Served> {
  const env: NodeJS.ProcessEnv = { ...process.env, MEMGATE_SQLITE_PATH: dbPath, MEMGATE_LOG_LEVEL: 'info', MEMGATE_TOKEN_THRESHOLD: '1000000000', MEMGATE_EMBEDDER: TEST_EMBEDDER };
  delete env['MEMGATE_API_KEYS'];
  delete env['MEMGATE_PORT'];
  // node --import tsx (what `npx tsx` runs) directly, so SIGTERM reaches the server and not a wrapper.
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/app/main.ts', 'serve', '--port', '0'], { cwd: process.cwd(), env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const firstLine = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        child.stdout.off('data', onData);
        resolve(out.slice(0, nl));
      }
    };
    child.stdout.on('data', onData);
    void exited.then((code) => reject(new Error(`server exited (${code}) before listening: ${err}`)));
  });
  const m = /^memgate listening on (http:\/\/[^:]+:\d+)$/.exec(firstLine);
  if (!m) throw new Error(`unexpected first line: ${firstLine}`);
  return { child, base: m[1]!, firstLine, stderr: () => err, exited };
}

/** One call streaming appends with a window of outstanding requests until the socket closes. */
async function streamCall(url: string, userId: string, acked: Set<string>): Promise<number> {
  const ws = await WsTester.open(url);
  await ws.request({ op: 'start', agentId: 'shutdown-agent', userId });
  let open = true;
  void ws.closed.then(() => (open = false));
  let n = 0;
  const worker = async () => {
    while (open) {
      const turnId = `${userId}-${n++}`;
      const reply = await Promise.race([ws.request({ op: 'append', role: 'user', text: `turn ${turnId}`, turnId }).catch(() => null), ws.closed.then(() => null)]);
      if (reply?.['op'] === 'ack') acked.add(turnId);
      else if (reply) await new Promise((r) => setTimeout(r, 5)); // unavailable while draining: nothing was stored
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return (await ws.closed).code;
}

describe('graceful shutdown', () => {
  it('SIGTERM under load: exit 0, connections closed 1001, every acked turn survives a restart', async () => {
    const db = join(dir, 'memgate.db');
    const first = await serve(db);
    expect(first.firstLine).toMatch(/^memgate listening on http:\/\/127\.0\.0\.1:\d+$/);
    expect(first.stderr()).toContain('open dev mode');
    expect((await http(first.base, 'GET', '/healthz')).body).toEqual({ status: 'ok' });

    const url = first.base.replace('http', 'ws') + '/v1/ws';
    const users = ['u1', 'u2', 'u3', 'u4', 'u5'];
    const acked = new Set<string>();
    const calls = users.map((u) => streamCall(url, u, acked));
    // SIGTERM only once the calls are streaming (acks are coming back), however slow the machine.
    await waitFor(() => acked.size >= 5 * users.length, 20_000, 'acks from the streaming calls');
    const ackedBeforeSignal = acked.size;
    first.child.kill('SIGTERM');
    const codes = await Promise.all(calls);
    expect(await first.exited).toBe(0);
    expect(ackedBeforeSignal).toBeGreaterThan(0);
    for (const code of codes) expect(code).toBe(1001);

    const second = await serve(db);
    try {
      // The drain ended the dropped calls, so extraction may have moved turns out of the buffer: a turn is
      // kept when it is still buffered or its turnId is still known (a re-send is a duplicate of it).
      const lost: string[] = [];
      for (const u of users) {
        const r = await http(second.base, 'GET', `/v1/agents/shutdown-agent/users/${u}/turns`);
        const buffered = new Set((r.body.turns as Array<{ turnId: string }>).map((t) => t.turnId));
        const mine = [...acked].filter((id) => id.startsWith(`${u}-`) && !buffered.has(id));
        if (mine.length === 0) continue;
        const sid = (await http(second.base, 'POST', '/v1/sessions', { body: { agentId: 'shutdown-agent', userId: u } })).body.sessionId as string;
        for (const turnId of mine) {
          const again = await http(second.base, 'POST', `/v1/sessions/${sid}/turns`, { body: { role: 'user', text: `turn ${turnId}`, turnId } });
          if (again.body.duplicate !== true) lost.push(turnId);
        }
      }
      expect(lost).toEqual([]);
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
  }, 60_000);
});
