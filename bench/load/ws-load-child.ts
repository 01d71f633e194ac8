/**
 * A WebSocket load-generator process (forked by ws-load.ts with an IPC channel):
 * receives a WsLoadSpec, opens the calls, sends JSON frames and measures the time
 * from send to the reply carrying the same `id`, then reports a histogram.
 * It runs apart from the server under test so the two never share an event loop.
 */
import WebSocket from 'ws';
import { Histogram } from '../lib/histogram.ts';
import type { WsLoadMessage, WsLoadResult, WsLoadSpec } from './ws-load-spec.ts';
import { prng, syntheticTurn } from './turn-text.ts';

const send = (m: WsLoadMessage) => process.send?.(m);

process.once('message', (spec: WsLoadSpec) => {
  run(spec)
    .then(
      (result) => send({ type: 'result', result }),
      (err: unknown) => send({ type: 'failed', message: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
    )
    .finally(() => setTimeout(() => process.exit(0), 50));
});

interface Call {
  index: number;
  ws: WebSocket;
  pending: Map<number, { at: number; measured: boolean }>;
  turn: number;
  timer: NodeJS.Timeout | null;
  rnd: () => number;
  started: boolean;
}

async function run(spec: WsLoadSpec): Promise<WsLoadResult> {
  const hist = new Histogram();
  const r: WsLoadResult = { hist: hist.snapshot(), sent: 0, totalReplies: 0, errors: 0, timeouts: 0, errorReplies: 0, connectFailures: 0, dropped: 0, measuredS: 0, firstError: null };
  let measuring = false;
  let stopping = false;
  let nextId = 1;
  let sentTotal = 0;
  let replies = 0;
  const calls: Call[] = [];
  const fail = (msg: string) => {
    r.errors += 1;
    r.firstError ??= msg;
  };

  const request = (call: Call, frame: Record<string, unknown>) => {
    if (call.ws.readyState !== WebSocket.OPEN) return;
    const id = nextId++;
    call.pending.set(id, { at: performance.now(), measured: measuring });
    if (measuring) r.sent += 1;
    sentTotal += 1;
    call.ws.send(JSON.stringify({ ...frame, id }));
  };
  const nextFrame = (call: Call): Record<string, unknown> => {
    if (spec.op === 'start') {
      const user = Math.floor(call.rnd() * spec.startUsers);
      return { op: 'start', agentId: spec.agentId, userId: `${spec.userPrefix}${user}` };
    }
    const t = syntheticTurn(spec.userOffset + call.index, call.turn++);
    return { op: 'append', role: t.role, text: t.text, speaker: t.speaker };
  };
  const schedule = (call: Call) => {
    if (stopping) return;
    const [lo, hi] = spec.cadenceMs;
    call.timer = setTimeout(
      () => {
        request(call, nextFrame(call));
        schedule(call);
      },
      lo + call.rnd() * (hi - lo),
    );
  };
  const onReply = (call: Call, data: WebSocket.RawData) => {
    let msg: { id?: unknown; op?: unknown; code?: unknown; message?: unknown };
    try {
      msg = JSON.parse(data.toString()) as typeof msg;
    } catch {
      return fail('unparseable reply');
    }
    if (typeof msg.id !== 'number') return; // pushed event frames carry no request id
    const p = call.pending.get(msg.id);
    if (!p) return;
    call.pending.delete(msg.id);
    replies += 1;
    if (!call.started) {
      call.started = true;
      if (spec.mode === 'cadence') {
        // The first request of each call lands within the shortest gap, so by the end of a
        // warm-up of that length every call is active and their phases are spread out.
        call.timer = setTimeout(() => {
          request(call, nextFrame(call));
          schedule(call);
        }, call.rnd() * spec.cadenceMs[0]);
      } else for (let i = 0; i < spec.inFlight; i++) request(call, nextFrame(call));
      return;
    }
    if (p.measured) {
      if (msg.op === 'error') {
        r.errorReplies += 1;
        fail(`error reply ${String(msg.code)}: ${String(msg.message)}`);
      } else hist.recordMs(performance.now() - p.at);
    }
    if (spec.mode === 'saturation' && !stopping) request(call, nextFrame(call));
  };

  const open = (index: number) =>
    new Promise<void>((resolve) => {
      const ws = new WebSocket(spec.url, { perMessageDeflate: false, handshakeTimeout: 10_000 });
      const call: Call = { index, ws, pending: new Map(), turn: 0, timer: null, rnd: prng(index + spec.userOffset * 31 + 7), started: false };
      ws.on('open', () => {
        calls.push(call);
        request(call, { op: 'start', agentId: spec.agentId, userId: `${spec.userPrefix}${spec.userOffset + index}` });
        resolve();
      });
      ws.on('message', (data) => onReply(call, data));
      ws.on('error', (err) => {
        if (!calls.includes(call)) {
          r.connectFailures += 1;
          r.firstError ??= `connect: ${err.message}`;
          resolve();
        }
      });
      ws.on('close', () => {
        if (!stopping && calls.includes(call)) {
          r.dropped += 1;
          fail('connection closed by server');
        }
      });
    });

  const progress = setInterval(() => send({ type: 'progress', open: calls.length, sent: sentTotal, replies, errors: r.errors, measuring }), 1000);
  const timeouts = setInterval(() => {
    const now = performance.now();
    for (const call of calls)
      for (const [id, p] of call.pending)
        if (now - p.at > spec.timeoutMs) {
          call.pending.delete(id);
          if (p.measured) {
            r.timeouts += 1;
            fail(`no reply within ${spec.timeoutMs} ms`);
          }
          if (spec.mode === 'saturation' && !stopping) request(call, nextFrame(call));
        }
  }, 250);

  // Ramp: open connections at rampPerS, in batches of 50 handshakes at a time.
  const batch = 50;
  for (let i = 0; i < spec.connections; i += batch) {
    const t0 = performance.now();
    const n = Math.min(batch, spec.connections - i);
    await Promise.all(Array.from({ length: n }, (_, j) => open(i + j)));
    const wantMs = (n / spec.rampPerS) * 1000;
    const took = performance.now() - t0;
    if (took < wantMs) await sleep(wantMs - took);
  }
  await sleep(spec.warmupS * 1000);
  measuring = true;
  const m0 = performance.now();
  await sleep(spec.durationS * 1000);
  measuring = false;
  r.measuredS = (performance.now() - m0) / 1000;
  stopping = true;
  for (const call of calls) if (call.timer) clearTimeout(call.timer);
  // Give requests sent inside the window their chance to be answered.
  const drainUntil = performance.now() + spec.timeoutMs;
  while (performance.now() < drainUntil && calls.some((c) => [...c.pending.values()].some((p) => p.measured))) await sleep(20);
  for (const call of calls)
    for (const p of call.pending.values())
      if (p.measured) {
        r.timeouts += 1;
        fail(`no reply within ${spec.timeoutMs} ms`);
      }
  clearInterval(progress);
  clearInterval(timeouts);
  for (const call of calls) call.ws.terminate();
  r.hist = hist.snapshot();
  r.totalReplies = replies;
  // A connection that never opened is an error of the run, not just a smaller run.
  r.errors += r.connectFailures;
  return r;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
