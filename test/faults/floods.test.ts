import net from 'node:net';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { spawnMemgate, type MemgateProcess } from '../support/processes.ts';
import { spread, writeFaultFigures } from './report.ts';
import { removeDir } from '../support/tmp.ts';

/**
 * Floods against a real `memgate serve`: a client that never reads its replies,
 * thousands of connections opened and dropped, slow-header HTTP clients. Memory
 * stays bounded and a bystander call keeps acking throughout (its latency is
 * reported, not asserted: targets belong in bench/).
 */
let proc: MemgateProcess;
let base: string;
let dir: string;

const rssMb = () => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.child.pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'memgate-floods-'));
  proc = spawnMemgate('serve', { name: 'floods', env: { MEMGATE_PORT: '0', MEMGATE_SQLITE_PATH: join(dir, 'm.db'), MEMGATE_LOG_LEVEL: 'error' }, args: [] });
  const line = await proc.waitForLine(/memgate listening on http:\/\/127\.0\.0\.1:\d+/, 30_000);
  base = /http:\/\/127\.0\.0\.1:\d+/.exec(line)![0];
}, 40_000);
afterAll(async () => {
  await proc?.stop('SIGTERM', 5_000);
  removeDir(dir);
});

async function openWs(): Promise<WebSocket> {
  const ws = new WebSocket(base.replace('http', 'ws') + '/v1/ws');
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return ws;
}

/** A call that appends one turn at a time for as long as `running()`, recording each ack's latency. */
async function bystander(running: () => boolean, acks: number[]): Promise<void> {
  const ws = await openWs();
  let waiting: ((m: any) => void) | null = null;
  ws.on('message', (d) => waiting?.(JSON.parse(String(d))));
  const request = (f: object) =>
    new Promise<any>((resolve) => {
      waiting = resolve;
      ws.send(JSON.stringify(f));
    });
  await request({ op: 'start', id: 0, agentId: 'flood', userId: 'bystander' });
  for (let i = 1; running(); i++) {
    const t0 = performance.now();
    const r = await request({ op: 'append', id: i, role: 'user', text: 'still here', turnId: `b-${Date.now()}-${i}` });
    if (r.op !== 'ack') throw new Error(`bystander got ${JSON.stringify(r)}`);
    acks.push(performance.now() - t0);
    await new Promise((res) => setTimeout(res, 5));
  }
  ws.close();
}

describe('fault: floods', () => {
  it('a non-reading client, 3,000 connections opened and dropped, slow-header clients: memory bounded, a bystander keeps acking', async () => {
    const rss0 = rssMb();
    const acks: number[] = [];
    let running = true;
    const side = bystander(() => running, acks);

    // 1. A client that sends appends and never reads a reply.
    const deaf = await openWs();
    (deaf as unknown as { _socket: net.Socket })._socket.pause();
    deaf.send(JSON.stringify({ op: 'start', id: 0, agentId: 'flood', userId: 'deaf' }));
    const padding = 'x'.repeat(2_000);
    for (let i = 1; i <= 20_000; i++) deaf.send(JSON.stringify({ op: 'search', id: i, query: `anything ${padding}` }));
    await new Promise((r) => setTimeout(r, 1_500));
    const rssDeaf = rssMb();
    deaf.terminate();

    // 2. Connections opened and dropped, 200 at a time.
    for (let batch = 0; batch < 15; batch++) {
      const socks = await Promise.all(Array.from({ length: 200 }, () => openWs().catch(() => null)));
      for (const s of socks) s?.terminate();
    }
    // 3. Slow-header HTTP clients: a byte every 100 ms, never finishing the request.
    const slow = Array.from({ length: 200 }, () => net.connect(Number(new URL(base).port), '127.0.0.1'));
    for (const s of slow) s.on('error', () => undefined);
    const header = 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ';
    for (let i = 0; i < 20; i++) {
      for (const s of slow) if (!s.destroyed) s.write(header[i % header.length]!);
      await new Promise((r) => setTimeout(r, 100));
    }
    const res = await fetch(base + '/healthz');
    expect(res.status).toBe(200);
    for (const s of slow) s.destroy();

    running = false;
    await side;
    const rss1 = rssMb();
    expect(proc.child.exitCode).toBeNull();
    expect(acks.length).toBeGreaterThan(20);
    // Catches a buffer that grows without bound (GiBs), not a tuning figure: RSS is reported to RELIABILITY.md.
    expect(rss1 - rss0).toBeLessThan(1024);
    writeFaultFigures({
      suite: 'floods',
      cases: 3,
      failures: 0,
      turnsLost: null,
      recovery: null,
      notes: `non-reader sent 20,000 × 2 KB searches, 3,000 connections opened and dropped, 200 slow-header clients; RSS ${rss0.toFixed(0)} → ${rssDeaf.toFixed(0)} (non-reader) → ${rss1.toFixed(0)} MB; bystander acks ${spread(acks)} over ${acks.length} turns`,
    });
  }, 120_000);
});
