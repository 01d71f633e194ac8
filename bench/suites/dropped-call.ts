import { join } from 'node:path';
import WebSocket from 'ws';
import { startMemgate, type MemgateServer } from '../lib/memgate.ts';
import { say } from '../lib/progress.ts';
import type { Figure } from '../lib/report-types.ts';
import { summarizeMs, type LatencySummary } from '../lib/stats.ts';
import type { Suite, SuiteOutcome } from '../lib/suite.ts';
import { figure } from '../lib/targets.ts';

const FIRST = ['Asha', 'Rohan', 'Divya', 'Karan', 'Neha', 'Vikram', 'Ishita', 'Manoj', 'Sneha', 'Tarun'];
const LAST = ['Kulkarni', 'Bhat', 'Chopra', 'Reddy', 'Saxena', 'Pillai', 'Ghosh', 'Menon', 'Joshi', 'Kapoor'];

/** One JSON request on a raw socket, answered by id. */
function request(ws: WebSocket, frame: Record<string, unknown>): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const onMessage = (data: Buffer) => {
      const reply = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      if (reply['id'] !== frame['id']) return;
      ws.off('message', onMessage);
      if (reply['op'] === 'error') reject(new Error(`${String(reply['code'])}: ${String(reply['message'])}`));
      else resolve(reply);
    };
    ws.on('message', onMessage);
    ws.send(JSON.stringify(frame));
  });
}

async function json(url: string, method: string, body?: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(url, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return (await r.json()) as Record<string, unknown>;
}

/** True when the context carries the caller's name as an extracted fact (the profile), not only as a recent turn. */
function knowsName(context: Record<string, unknown>, name: string): boolean {
  return JSON.stringify(context['profile'] ?? {}).includes(name) && String(context['contextBlock'] ?? '').includes(name);
}

/**
 * One dropped call after another: the caller says their name, the socket is cut (no `end`),
 * and the clock runs until the context a new call would start with holds the name as a fact
 * (polled every 20 ms on the read-only context route, then confirmed by a real start).
 */
async function dropToBlock(memgate: MemgateServer, agentId: string, calls: number): Promise<{ samples: number[]; failures: number; firstMs: number | null }> {
  const samples: number[] = [];
  let failures = 0;
  let firstMs: number | null = null;
  // Call -1 warms the server up (the first extraction loads the embedder's model) and is reported apart.
  for (let i = -1; i < calls; i++) {
    const userId = `dropped-${i}`;
    const n = i + 1;
    const name = `${FIRST[n % FIRST.length]} ${LAST[Math.floor(n / FIRST.length) % LAST.length]}`;
    const ws = new WebSocket(memgate.wsUrl, { perMessageDeflate: false });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    await request(ws, { op: 'start', id: 1, agentId, userId });
    await request(ws, { op: 'append', id: 2, role: 'agent', text: 'Hello, may I have your name please?', turnId: `${userId}-1` });
    await request(ws, { op: 'append', id: 3, role: 'user', text: `My name is ${name}.`, turnId: `${userId}-2` });
    const closedAt = performance.now();
    ws.terminate();
    const deadline = closedAt + 60_000;
    let knownAt: number | null = null;
    while (performance.now() < deadline) {
      if (knowsName(await json(`${memgate.url}/v1/agents/${agentId}/users/${userId}/context`, 'GET'), name)) {
        knownAt = performance.now();
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    const next = await json(`${memgate.url}/v1/sessions`, 'POST', { agentId, userId });
    if (knownAt === null || !knowsName(next, name)) failures++;
    else if (i < 0) firstMs = knownAt - closedAt;
    else samples.push(knownAt - closedAt);
  }
  return { samples, failures, firstMs };
}

/**
 * A dropped call (socket closed without `end`) reaching the next call: the time from the socket's
 * close to the next start's context block holding what the call said as an extracted fact, on the
 * embedded default with the offline extractor. Measured with the default grace (`server.dropGraceMs`)
 * and with a grace of 0, which leaves the extraction lane's own share.
 */
export const droppedCallSuite: Suite = {
  name: 'dropped-call',
  title: 'Dropped call → next call’s context block (embedded default, offline extractor)',
  quick: false,
  async run(ctx): Promise<SuiteOutcome> {
    const calls = ctx.profile === 'full' ? 30 : 5;
    const figures: Figure[] = [];
    const details: Record<string, unknown> = { calls, extractor: 'offline' };
    for (const [label, graceMs] of [
      ['default grace (5 s)', null],
      ['grace 0', 0],
    ] as const) {
      say(`  ${calls} dropped calls, ${label}`);
      const dir = join(ctx.tmpDir, 'dropped-call', String(graceMs ?? 'default'));
      const memgate = await startMemgate(dir, graceMs === null ? {} : { env: { MEMGATE_DROP_GRACE_MS: String(graceMs) } });
      try {
        const { samples, failures, firstMs } = await dropToBlock(memgate, `bench-drop-${ctx.runId}`, calls);
        const summary: LatencySummary = summarizeMs(samples, failures, 0);
        details[label] = { ...summary, firstCallMs: firstMs };
        const bench = `dropped call → next block, ${label}`;
        figures.push(figure({ bench, metric: 'p50', value: summary.p50Ms, unit: 'ms' }));
        figures.push(figure({ bench, metric: 'max', value: summary.maxMs, unit: 'ms', ...(failures > 0 ? { note: `${failures} calls never reached the block within 60 s` } : {}) }));
      } finally {
        await memgate.stop();
      }
    }
    return { status: 'ok', figures, details };
  },
};
