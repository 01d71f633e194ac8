import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../gateway/support/real-server.ts';
import { REPO_ROOT } from '../support/processes.ts';
import { removeDir } from '../support/tmp.ts';

/**
 * The browser build of `memgate/client` (`dist/client/browser.js`, the native
 * WebSocket, the key as `?token=`) in real headless Chromium: a page imports the
 * compiled module and holds a call against a running memgate.
 */
const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) process.stderr.write(`SKIPPED: browser client test (no ${CHROMIUM}; .ci/run installs Debian's chromium)\n`);

let out: string;
let srv: TestServer;
let pages: Server;
let pagesUrl: string;

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.html': 'text/html' };

beforeAll(async () => {
  if (!hasChromium) return;
  // A build of our own: the package test may be rebuilding dist/ at the same moment.
  out = mkdtempSync(join(tmpdir(), 'memgate-browser-'));
  execFileSync(process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', out], { cwd: REPO_ROOT, stdio: 'pipe', timeout: 180_000 });
  srv = await startTestServer({ keys: { 'browser-key': 'web' } });
  const roots: Record<string, string> = { '/dist/': out, '/msgpackr/': join(REPO_ROOT, 'node_modules/msgpackr') };
  pages = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end(`<!doctype html><script type="importmap">{"imports":{"msgpackr":"/msgpackr/index.js"}}</script><p>memgate browser client</p>`);
    }
    const root = Object.keys(roots).find((r) => path.startsWith(r));
    const file = root ? normalize(join(roots[root]!, path.slice(root.length))) : '';
    if (!root || !file.startsWith(roots[root]!) || !existsSync(file)) return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
  const a = pages.address();
  pagesUrl = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
}, 200_000);

afterAll(async () => {
  if (!hasChromium) return;
  await new Promise((r) => pages.close(r));
  await srv.close();
  removeDir(out);
});

describe.skipIf(!hasChromium)('memgate/client in Chromium', () => {
  it('a page imports the browser build and holds a call over the native WebSocket, in both encodings; a wrong key is refused', async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    try {
      const page = await browser.newPage();
      await page.goto(pagesUrl);
      // A module script of the page itself (not page.evaluate: vitest would rewrite its dynamic import).
      await page.addScriptTag({
        type: 'module',
        content: `
          import { MemgateClient, MemgateError } from '/dist/client/browser.js';
          const out = { hasProcess: typeof globalThis.process !== 'undefined' };
          try {
            for (const encoding of ['json', 'msgpack']) {
              const client = await MemgateClient.connect({ url: ${JSON.stringify(srv.base)}, token: 'browser-key', encoding });
              const ctx = await client.start({ agentId: 'web', userId: 'u-' + encoding });
              const ack = await client.append({ role: 'user', text: 'My name is Asha.', turnId: 't-' + encoding });
              const again = await client.append({ role: 'user', text: 'My name is Asha.', turnId: 't-' + encoding });
              const found = await client.search('name');
              out[encoding] = { tools: ctx.tools.length, ack, duplicate: again.duplicate, results: Array.isArray(found.results) };
              await client.close();
            }
            try {
              await MemgateClient.connect({ url: ${JSON.stringify(srv.base)}, token: 'wrong', reconnect: false });
              out.wrongKey = 'connected';
            } catch (err) {
              out.wrongKey = err instanceof MemgateError ? 'refused' : String(err);
            }
          } catch (err) {
            out.error = String(err);
          }
          window.__result = out;
        `,
      });
      await page.waitForFunction(() => (globalThis as { __result?: unknown }).__result !== undefined, undefined, { timeout: 20_000 });
      const result = await page.evaluate(() => (globalThis as { __result?: unknown }).__result);
      expect(result).toEqual({
        hasProcess: false,
        json: { tools: 1, ack: { turnId: 't-json', seq: 1, duplicate: false }, duplicate: true, results: true },
        msgpack: { tools: 1, ack: { turnId: 't-msgpack', seq: 1, duplicate: false }, duplicate: true, results: true },
        wrongKey: 'refused',
      });
    } finally {
      await browser.close();
    }
  }, 60_000);
});
