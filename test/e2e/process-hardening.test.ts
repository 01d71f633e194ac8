import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnMemgate, startGatewayProcess, tail, type MemgateProcess } from '../support/processes.ts';
import { removeDir } from '../support/tmp.ts';

/**
 * Faults that once took the real process down or let a twin share its port.
 * Run against `memgate serve` as a child process: an unhandled rejection or a
 * second listener only shows in a real process.
 */
let dir: string;
let proc: MemgateProcess;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'memgate-harden-'));
  ({ proc, url } = await startGatewayProcess({ name: 'gateway', env: { MEMGATE_PORT: '0', MEMGATE_SQLITE_PATH: join(dir, 'm.db') }, args: [] }));
});
afterAll(async () => {
  await proc?.stop();
  removeDir(dir);
});

const long = 'x'.repeat(129);

describe('one request cannot crash the server', () => {
  it.each([
    ['POST', `/v1/agents/${long}/users/u/flush`],
    ['POST', `/v1/agents/a/users/${long}/flush`],
    ['GET', `/v1/agents/${long}/users/u/entities`],
    ['GET', `/v1/agents/a/users/${long}/turns`],
    ['DELETE', `/v1/agents/${long}/users/u`],
    ['PUT', `/v1/agents/${long}/schema`],
    ['POST', `/v1/sessions/${long}/turns`],
    ['POST', `/v1/sessions/${long}/end`],
  ])('%s %s → 400 and the process lives', async (method, path) => {
    const res = await fetch(url + path, { method, headers: { 'content-type': 'application/json' }, body: method === 'GET' || method === 'DELETE' ? undefined : '{}' });
    expect(res.status, tail(proc.lines)).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('bad_request');
    expect((await fetch(url + '/healthz')).status).toBe(200);
  });
});

describe('the listen socket is exclusive', () => {
  it('a second server on the same port exits 1 naming the port and how to change it', async () => {
    const port = new URL(url).port;
    const twin = spawnMemgate('serve', { name: 'twin', env: { MEMGATE_PORT: port, MEMGATE_SQLITE_PATH: join(dir, 'twin.db') }, args: [] });
    const exit = await Promise.race([twin.exited, new Promise<null>((r) => setTimeout(r, 20_000, null))]);
    if (exit === null) await twin.stop('SIGKILL');
    expect(exit, tail(twin.lines)).toMatchObject({ code: 1 });
    const out = twin.lines.join('\n');
    expect(out).toContain(`:${port}`);
    expect(out).toMatch(/in use/);
    expect(out).toMatch(/MEMGATE_PORT|--port/);
    expect(twin.lines.some((l) => l.startsWith('memgate listening on'))).toBe(false);
    expect((await fetch(url + '/healthz')).status).toBe(200);
  });
});
