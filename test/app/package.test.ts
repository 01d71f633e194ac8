import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { REPO_ROOT } from '../support/processes.ts';
import { removeDir } from '../support/tmp.ts';

/**
 * memgate as a user installs and runs it: `npm pack` (which builds dist/ on
 * `prepare`), the tarball installed into a fresh project whose plain .mjs
 * script imports `memgate` and `memgate/client`, then `memgate/livekit` once
 * the project adds its optional peer `@livekit/agents`; and `npm start` as one
 * process that a SIGTERM or SIGINT stops gracefully with exit 0.
 */
let dir: string;
let tarball: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'memgate-package-'));
  execFileSync('npm', ['pack', '--pack-destination', dir, '--loglevel=error'], { cwd: REPO_ROOT, stdio: 'pipe', timeout: 180_000 });
  tarball = join(
    dir,
    readdirSync(dir).find((f) => f.endsWith('.tgz'))!,
  );
}, 200_000);
// Two installs (the package, then @livekit/agents): removing them takes longer than the default hook timeout on a busy machine.
afterAll(() => removeDir(dir), 120_000);

describe('the packed package', () => {
  it('carries docs/ and every file the README links to, so its links and screenshot work on npm', () => {
    const files = new Set(
      execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
        .split('\n')
        .map((f) => f.replace(/^package\//, '')),
    );
    expect(files).toContain('docs/protocol.md');
    expect(files).toContain('docs/dashboard.png');
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const links = [...readme.matchAll(/\]\(([^)#:]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(3);
    expect(links.filter((l) => !files.has(l))).toEqual([]);
  });

  it('installs into a fresh project; a plain .mjs imports the library and the client and holds a call', async () => {
    const proj = join(dir, 'proj');
    cpSync(join(REPO_ROOT, 'package.json'), join(dir, 'memgate-package.json')); // kept for diagnostics
    execFileSync('mkdir', ['-p', proj]);
    writeFileSync(join(proj, 'package.json'), JSON.stringify({ name: 'proj', type: 'module', private: true }));
    // Dependencies from the npm cache; install scripts skipped and better-sqlite3's native build copied from this
    // checkout (same version, same Node ABI): compiling it again takes minutes on a machine without prebuilt binaries.
    execFileSync('npm', ['install', tarball, '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: proj, stdio: 'pipe', timeout: 240_000 });
    cpSync(join(REPO_ROOT, 'node_modules/better-sqlite3/build'), join(proj, 'node_modules/better-sqlite3/build'), { recursive: true });
    writeFileSync(
      join(proj, 'call.mjs'),
      `import { createMemgate } from 'memgate';
import { MemgateClient, MemgateError } from 'memgate/client';
const mg = await createMemgate({ sqlite: { path: ':memory:' }, log: { level: 'error' } });
const { url } = await mg.listen({ port: 0 });
const client = await MemgateClient.connect({ url });
await mg.service.putSchema('default', 'estate', { fields: [{ name: 'budget', category: 'temporal', type: 'money', description: 'Total budget', hints: ['budget'] }] });
await client.start({ agentId: 'estate', userId: 'asha' });
const ack = await client.append({ role: 'user', text: 'My budget is 80 lakhs.', turnId: 't1' });
await client.end();
await mg.service.flush({ tenantId: 'default', agentId: 'estate', userId: 'asha' });
const next = await client.start({ agentId: 'estate', userId: 'asha' });
// The default embedder (fused) from the installed package: the query is embedded on the embed thread
// (a model that cannot load fails the search).
const found = await client.search('What is her budget?');
console.log(JSON.stringify({ ack, facts: next.facts.map((f) => f.key), block: next.contextBlock.includes('80'), found: found.results.some((r) => r.text.includes('80')) && !found.partial, embedder: mg.config.adapters.embedder, error: typeof MemgateError }));
await client.close();
await mg.close();
`,
    );
    const out = execFileSync(process.execPath, ['call.mjs'], { cwd: proj, encoding: 'utf8', timeout: 30_000 });
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ ack: { turnId: 't1', seq: 1, duplicate: false }, facts: ['budget'], block: true, found: true, embedder: 'fused', error: 'function' });

    // The bin, as a user of the install runs it.
    expect(execFileSync('npx', ['--no-install', 'memgate', '--help'], { cwd: proj, encoding: 'utf8', stdio: 'pipe', timeout: 30_000 })).toMatch(/^memgate — memory gateway/);
    // memgate/livekit needs its optional peer: without it the import names the missing package.
    writeFileSync(join(proj, 'lk.mjs'), `await import('memgate/livekit').then(() => console.log('loaded'), (e) => console.log(e.code, e.message.includes('@livekit/agents')));\n`);
    expect(execFileSync(process.execPath, ['lk.mjs'], { cwd: proj, encoding: 'utf8', timeout: 30_000 }).trim()).toBe('ERR_MODULE_NOT_FOUND true');
    const agentsVersion = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies['@livekit/agents']!;
    execFileSync('npm', ['install', `@livekit/agents@${agentsVersion}`, '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: proj,
      stdio: 'pipe',
      timeout: 240_000,
    });
    writeFileSync(
      join(proj, 'lk.mjs'),
      `import { createMemgate } from 'memgate';
import { MemgateMemory } from 'memgate/livekit';
import { voice } from '@livekit/agents';
const mg = await createMemgate({ sqlite: { path: ':memory:' }, log: { level: 'error' } });
const { url } = await mg.listen({ port: 0 });
const memory = await MemgateMemory.start({ url, agentId: 'estate', userId: 'asha', logger: { info() {}, warn: console.error } });
const agent = new voice.Agent({ instructions: memory.instructions('You are Maya.'), tools: memory.tools() });
await memory.end();
console.log(JSON.stringify({ block: agent.instructions.startsWith('You are Maya.') && agent.instructions.includes(memory.context.contextBlock.trim()), tools: Object.keys(agent.toolCtx.functionTools) }));
await mg.close();
`,
    );
    const lk = execFileSync(process.execPath, ['lk.mjs'], { cwd: proj, encoding: 'utf8', timeout: 30_000 });
    expect(JSON.parse(lk.trim().split('\n').pop()!)).toEqual({ block: true, tools: ['memory_search'] });
  }, 420_000);
});

async function waitListening(proc: ReturnType<typeof spawn>): Promise<string> {
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not listening: ${out}`)), 30_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /memgate listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    proc.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

describe('npm start', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`is one process: ${signal} to npm's PID stops the server gracefully, exit 0, acked turns kept`, async () => {
      const data = join(dir, `${signal}.db`);
      const env: NodeJS.ProcessEnv = { ...process.env, MEMGATE_PORT: '0', MEMGATE_SQLITE_PATH: data, MEMGATE_LOG_LEVEL: 'info' };
      for (const k of Object.keys(env)) if (k.startsWith('MEMGATE_TEST') || k === 'NODE_OPTIONS') delete env[k];
      const npm = spawn('npm', ['start', '--silent'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      const url = await waitListening(npm);
      const ws = new WebSocket(url.replace('http', 'ws') + '/v1/ws');
      await new Promise((r) => ws.once('open', r));
      const replies: Array<Record<string, unknown>> = [];
      ws.on('message', (d) => replies.push(JSON.parse(String(d))));
      ws.send(JSON.stringify({ op: 'start', id: 1, agentId: 'a', userId: 'u' }));
      for (let i = 0; i < 5; i++) ws.send(JSON.stringify({ op: 'append', id: i + 2, role: 'user', text: `turn ${i}`, turnId: `t${i}` }));
      while (replies.filter((r) => r['op'] === 'ack').length < 5) await new Promise((r) => setTimeout(r, 10));
      const exit = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
      npm.kill(signal);
      expect(await exit).toBe(0);
      await expect(fetch(url + '/healthz')).rejects.toThrow();
      // The same data, the compiled bin directly: every acked turn is there.
      const again = spawn(process.execPath, ['bin/memgate.mjs', 'serve'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      const url2 = await waitListening(again);
      const turns = (await (await fetch(url2 + '/v1/agents/a/users/u/turns')).json()) as { turns: Array<{ turnId: string }> };
      // The drain ended the call, so extraction may have taken turns out of the buffer: those are
      // kept when their turnId is still known (a re-send is acked as a duplicate of the original).
      const kept = new Set(turns.turns.map((t) => t.turnId));
      const post = async (path: string, body: unknown) =>
        (await fetch(url2 + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<Record<string, unknown>>;
      const missing = ['t0', 't1', 't2', 't3', 't4'].filter((id) => !kept.has(id));
      if (missing.length > 0) {
        const sid = (await post('/v1/sessions', { agentId: 'a', userId: 'u' }))['sessionId'] as string;
        for (const turnId of missing) if ((await post(`/v1/sessions/${sid}/turns`, { role: 'user', text: 'again', turnId }))['duplicate'] === true) kept.add(turnId);
      }
      expect([...kept].sort()).toEqual(['t0', 't1', 't2', 't3', 't4']);
      const exit2 = new Promise<number | null>((resolve) => again.once('exit', (code) => resolve(code)));
      again.kill(signal);
      expect(await exit2).toBe(0);
    }, 60_000);
  }
});
