/**
 * `npm run demo`: a scripted call a newcomer can watch on the dashboard.
 *
 * Talks to the memgate at MEMGATE_URL (default http://127.0.0.1:7700, key in
 * MEMGATE_API_KEY); when nothing answers there it starts one (the embedded
 * default, its data in a temporary folder) and keeps it running after the demo
 * until Ctrl-C. Two calls of a home buyer: the budget is 50 lakh in the first,
 * 80 lakh in the second, with an extraction after each, so the Calls view shows
 * the live call and its turns and the Memory view shows the budget move on the
 * timeline. `--loop` repeats with a new user every round; `--fast` skips the pauses.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { MemgateClient } from '../src/client/index.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));
const fast = args.has('--fast');
const key = process.env['MEMGATE_API_KEY'] ?? '';
let base = (process.env['MEMGATE_URL'] ?? 'http://127.0.0.1:7700').replace(/\/$/, '');
let child: ChildProcess | null = null;
let dataDir: string | null = null;

const pause = (ms: number) => new Promise((r) => setTimeout(r, fast ? Math.min(ms, 20) : ms));
const headers = (): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {});

async function reachable(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })).ok;
  } catch {
    return false;
  }
}

/** Start `memgate serve` on a free port with its data in a temporary folder; resolves with its URL. */
async function startServer(): Promise<string> {
  dataDir = mkdtempSync(join(tmpdir(), 'memgate-demo-'));
  const port = new URL(base).port || '7700';
  const env = { ...process.env, MEMGATE_SQLITE_PATH: join(dataDir, 'memgate.db'), MEMGATE_LOG_LEVEL: 'warn' };
  const spawnAt = (p: string) => spawn(process.execPath, [join(ROOT, 'bin/memgate.mjs'), 'serve', '--port', p], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
  for (const p of [port, '0']) {
    const proc = spawnAt(p);
    const line = await new Promise<string | null>((resolve) => {
      createInterface({ input: proc.stdout! }).once('line', resolve);
      proc.once('exit', () => resolve(null));
    });
    const m = line && /listening on (http:\/\/\S+)/.exec(line);
    if (m) {
      child = proc;
      return m[1]!;
    }
  }
  throw new Error('could not start memgate');
}

async function flush(agentId: string, userId: string): Promise<void> {
  const r = await fetch(`${base}/v1/agents/${agentId}/users/${userId}/flush`, { method: 'POST', headers: headers() });
  const body = (await r.json()) as Record<string, unknown>;
  console.log(
    `  flush: ${r.status} ${JSON.stringify({ ran: body['ran'], turnsRead: body['turnsRead'], factsExtracted: body['factsExtracted'], entitiesSuperseded: body['entitiesSuperseded'], durationMs: body['durationMs'] })}`,
  );
}

type Line = [role: 'user' | 'agent', speaker: string, text: string, extra?: { asrConfidence?: number; interrupted?: boolean }];

const CALL_1: Line[] = [
  ['agent', 'Meera (agent)', 'Hello, this is Meera from Skyline Homes. How can I help?'],
  ['user', 'Asha Rao', 'Hi, I am Asha Rao. I am looking for a 3 BHK flat.', { asrConfidence: 0.96 }],
  ['agent', 'Meera (agent)', 'Lovely. Which area are you considering, and what is your', { interrupted: true }],
  ['user', 'Asha Rao', 'My budget is 50 lakhs, somewhere near Whitefield.', { asrConfidence: 0.91 }],
  ['agent', 'Meera (agent)', 'Noted: 50 lakhs near Whitefield. I will send you some options.'],
  ['user', 'Asha Rao', 'Thanks, talk soon.', { asrConfidence: 0.58 }],
];
const CALL_2: Line[] = [
  ['agent', 'Meera (agent)', 'Hello Asha, Meera again. Any news on the loan?'],
  ['user', 'Asha Rao', 'Yes! The bank approved the loan, so my budget went up from 50 lakhs to 80 lakhs.', { asrConfidence: 0.95 }],
  ['agent', 'Meera (agent)', 'Wonderful, with 80 lakhs we can look at bigger flats too.'],
];

async function call(agentId: string, userId: string, lines: Line[], at: number): Promise<void> {
  const client = await MemgateClient.connect({ url: base, ...(key ? { token: key } : {}) });
  const ctx = await client.start({ agentId, userId });
  console.log(`  call ${ctx.sessionId} started; context block ${ctx.contextBlock.length} chars`);
  for (const [i, [role, speaker, text, extra]] of lines.entries()) {
    await pause(1500);
    const turnId = `${userId}-${at}-${i}`;
    const ack = await client.append({ role, text, speaker, turnId, ts: at + i * 4000, ...extra });
    console.log(`  ${role.padEnd(5)} #${ack.seq} ${text}`);
    if (i === 1) {
      // A client retry: the same turnId is stored once and acked as a duplicate.
      await client.append({ role, text, speaker, turnId, ts: at + i * 4000, ...extra });
    }
  }
  await pause(1000);
  await client.end();
  await client.close();
}

async function main(): Promise<void> {
  if (!(await reachable(base))) {
    console.log(`no memgate at ${base}: starting one (embedded default, data in a temporary folder)`);
    base = await startServer();
  }
  const agentId = 'real-estate';
  let round = 0;
  do {
    const userId = round === 0 ? 'demo-asha' : `demo-asha-${round}`;
    console.log(`\nDashboard:  ${base}/dashboard${key ? ' (type your API key)' : ''}`);
    console.log(`This user:  ${base}/dashboard#memory/${agentId}/${userId}\n`);
    await pause(3000);
    const tenDaysAgo = Date.now() - 10 * 86_400_000;
    console.log('call 1 (ten days ago, in world time):');
    await call(agentId, userId, CALL_1, tenDaysAgo);
    await flush(agentId, userId);
    await pause(3000);
    console.log('call 2 (now):');
    await call(agentId, userId, CALL_2, Date.now());
    await flush(agentId, userId);
    round++;
  } while (args.has('--loop'));
  if (child) {
    console.log(`\nmemgate keeps running at ${base}/dashboard: press Ctrl-C to stop it.`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
      if (fast) resolve();
    });
  }
}

main()
  .catch((err: unknown) => {
    console.error(String(err));
    process.exitCode = 1;
  })
  .finally(() => {
    if (child) {
      child.kill('SIGTERM');
      child.once('exit', () => dataDir && rmSync(dataDir, { recursive: true, force: true }));
    }
  });
