/**
 * RSS of a fresh `npm start` after a small warm-up, per embedder (issue 17's RSS target):
 * each embedder's server on a private data file, 3 users × 20 turns, a search and `end` each,
 * then 8 s to settle; prints the server's VmRSS and its largest resident mappings (Linux).
 *   npx tsx scripts/rss-after-warmup.ts [offline fused ...]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const embedders = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['offline', 'fused'];

async function measure(embedder: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'memgate-rss-'));
  const env = { ...process.env, MEMGATE_EMBEDDER: embedder, MEMGATE_SQLITE_PATH: join(dir, 'memgate.db'), MEMGATE_LOG_LEVEL: 'warn' };
  const child = spawn(process.execPath, ['bin/memgate.mjs', 'serve', '--port', '0', '--host', '127.0.0.1'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const base = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /listening on (http:\/\/[^\s]+)/.exec(out);
        if (m) resolve(m[1]!.replace(/\/$/, ''));
      });
      child.once('exit', (code) => reject(new Error(`server exited (${code}) before listening`)));
    });
    const post = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
      const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const text = await r.text();
      if (!r.ok) throw new Error(`${path}: ${r.status} ${text}`);
      return text ? (JSON.parse(text) as Record<string, unknown>) : {};
    };
    for (let u = 0; u < 3; u++) {
      const { sessionId } = (await post('/v1/sessions', { agentId: 'real-estate', userId: `u${u}` })) as { sessionId: string };
      for (let i = 0; i < 20; i++)
        await post(`/v1/sessions/${sessionId}/turns`, { role: i % 2 ? 'agent' : 'user', text: `My budget is ${50 + i} lakhs and I want a 3 BHK near Whitefield, turn ${i}.` });
      await post('/v1/search', { agentId: 'real-estate', userId: `u${u}`, query: 'where does she want a flat' });
      await post(`/v1/sessions/${sessionId}/end`, {});
    }
    await sleep(8000);
    const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
    const maps = largestMappings(child.pid!);
    console.log(`${embedder}: RSS ${(Number(rss) / 1024).toFixed(0)} MiB after warm-up; largest resident mappings: ${maps.join(', ')}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

function largestMappings(pid: number): string[] {
  const sizes: Array<{ name: string; kb: number }> = [];
  let name = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s+(.*)$/.exec(line);
    if (head) name = head[1]!.trim() || 'anonymous';
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) sizes.push({ name, kb: Number(rss[1]) });
  }
  return sizes
    .sort((a, b) => b.kb - a.kb)
    .slice(0, 4)
    .map((m) => `${(m.kb / 1024).toFixed(0)} MiB ${m.name}`);
}

for (const e of embedders) await measure(e);
