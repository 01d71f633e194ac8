/**
 * A voice call as a client of a gateway cluster must run it, done by hand on a
 * raw WebSocket (the `ws` package, no memgate client): it streams its turns
 * with a few appends in flight, and when its socket closes (a draining gateway
 * sends 1001) or an append is refused `unavailable`, it reconnects to the same
 * URL, starts again with the same sessionId and re-sends every unacked turn by
 * its turnId before going on. What it saw is returned for the test to check.
 */
import { WsTester, type Reply } from '../../gateway/support/ws-tester.ts';
import { sleep } from '../../support/wait.ts';

/** One planned turn. */
export interface PlannedTurn {
  turnId: string;
  role: 'user' | 'agent';
  text: string;
}

/** What a call does. */
export interface CallPlan {
  /** ws://… of the gateway or the load balancer in front of the gateways. */
  wsUrl: string;
  token: string;
  agentId: string;
  userId: string;
  sessionId: string;
  turns: readonly PlannedTurn[];
  /** Uniform random pause after each ack (ms). */
  gapMs: readonly [number, number];
  /** Appends in flight at most. */
  window: number;
  /** Called after each ack with the number of turns acked so far. */
  onAck?: (acked: number) => void;
}

/** One lost connection and the recovery from it. */
export interface Drop {
  code: number;
  /** performance.now() at the close event, and when the new connection's start was answered. */
  closedAt: number;
  reconnectedAt: number;
  /** Appends in flight when the socket closed, re-sent on the new connection. */
  resent: number;
}

/** What the call saw. */
export interface CallOutcome {
  /** Seq of each turn, from its first ack. */
  seqs: Map<string, number>;
  /** Acks that said `duplicate:true` (a re-sent turn the old gateway had already stored). */
  duplicates: number;
  drops: Drop[];
}

interface Connection {
  ws: WsTester;
  /** Settles at the close event with its code and time. */
  closed: Promise<{ code: number; at: number }>;
  /** Every ack this connection received, by request id: the ones that came in right before the close count too. */
  acks: Map<unknown, Reply>;
}

async function connect(plan: CallPlan): Promise<Connection> {
  const deadline = Date.now() + 15_000;
  for (let attempt = 1; ; attempt++) {
    let refused: Reply | null = null;
    try {
      const ws = await WsTester.open(plan.wsUrl, plan.token);
      const closed = ws.closed.then(({ code }) => ({ code, at: performance.now() }));
      const acks = new Map<unknown, Reply>();
      ws.ws.on('message', (data: Buffer, binary: boolean) => {
        const r = binary ? null : (JSON.parse(data.toString('utf8')) as Reply);
        if (r?.['op'] === 'ack') acks.set(r['id'], r);
      });
      const context = await ws.request({ op: 'start', agentId: plan.agentId, userId: plan.userId, sessionId: plan.sessionId });
      if (context['op'] === 'context') return { ws, closed, acks };
      ws.ws.terminate();
      refused = context;
    } catch (err) {
      // Refused upgrades and sockets closed under the start: the gateway behind the URL is going away.
      if (Date.now() > deadline) throw new Error(`${plan.sessionId}: no gateway took the call again within 15 s (attempt ${attempt})`, { cause: err });
    }
    // A gateway that began draining between the upgrade and the start refuses it: try again.
    if (refused !== null && refused['code'] !== 'unavailable') throw new Error(`${plan.sessionId}: start refused: ${JSON.stringify(refused)}`);
    await sleep(Math.min(25 * attempt, 200));
  }
}

/** Runs the call to its last ack (it does not end it: the test reads what was stored first). */
export async function runResumableCall(plan: CallPlan): Promise<CallOutcome & { close(): Promise<void> }> {
  const seqs = new Map<string, number>();
  const drops: Drop[] = [];
  let duplicates = 0;
  let conn = await connect(plan);
  /** Turn indexes sent on this connection and not acked yet, oldest first. */
  const pending: number[] = [];
  let next = 0;
  const send = (i: number) => {
    const t = plan.turns[i]!;
    conn.ws.send({ op: 'append', id: t.turnId, role: t.role, text: t.text, turnId: t.turnId });
  };
  /** The ack of the oldest turn in flight. */
  const take = (reply: Reply) => {
    const turnId = plan.turns[pending[0]!]!.turnId;
    if (reply['turnId'] !== turnId) throw new Error(`${turnId}: ack names ${String(reply['turnId'])}`);
    const seq = reply['seq'] as number;
    const known = seqs.get(turnId);
    if (known !== undefined && known !== seq) throw new Error(`${turnId}: acked with seq ${known}, then ${seq}`);
    if (reply['duplicate'] === true) duplicates++;
    seqs.set(turnId, seq);
    pending.shift();
    plan.onAck?.(seqs.size);
  };
  while (seqs.size < plan.turns.length) {
    while (next < plan.turns.length && pending.length < plan.window) {
      pending.push(next);
      send(next++);
    }
    const oldest = plan.turns[pending[0]!]!.turnId;
    // A waiter outrun by the close must not reject later, unobserved.
    const answered = conn.ws
      .waitFor((r) => r['id'] === oldest, 15_000)
      .then(
        (reply) => ({ reply }),
        () => null,
      );
    const event = await Promise.race([answered, conn.closed]);
    if (event === null) throw new Error(`${oldest}: no reply within 15 s on an open socket`);
    if ('reply' in event && event.reply['op'] === 'ack') {
      take(event.reply);
      await sleep(plan.gapMs[0] + Math.random() * (plan.gapMs[1] - plan.gapMs[0]));
      continue;
    }
    if ('reply' in event && !(event.reply['op'] === 'error' && event.reply['code'] === 'unavailable')) throw new Error(`${oldest}: unexpected reply ${JSON.stringify(event.reply)}`);
    // Closed, or refused by a draining gateway (whose close follows): reconnect and re-send by turnId.
    const { code, at } = 'reply' in event ? await conn.closed : event;
    // Acks that arrived before the close count: only turns nobody acked are re-sent.
    const ackOf = () => (pending.length > 0 ? conn.acks.get(plan.turns[pending[0]!]!.turnId) : undefined);
    for (let ack = ackOf(); ack !== undefined; ack = ackOf()) take(ack);
    conn = await connect(plan);
    drops.push({ code, closedAt: at, reconnectedAt: performance.now(), resent: pending.length });
    for (const i of pending) send(i);
  }
  const last = conn;
  return {
    seqs,
    duplicates,
    drops,
    close: async () => {
      await last.ws.close();
    },
  };
}
