import type { MemgateEvent } from '../ports/event-bus.ts';

/**
 * What the dashboard's read routes show of a tenant's live activity (`/v1/calls`,
 * `/v1/extraction`), kept from the EventBus events this gateway hears (every
 * gateway's and worker's, on a shared bus). Updated after the acks (events are
 * published on setImmediate), bounded per tenant, never on the call path.
 */

/** An active (or recently ended) call. */
export interface LiveCall {
  sessionId: string;
  agentId: string;
  userId: string;
  startedAt: number;
  endedAt: number | null;
  /** Why it ended: `end` (asked for), `dropped` (its socket closed without `end`), `idle` (no event for 30 min: presumed gone). */
  endReason: string | null;
  /** Times the call was started again after a drop or an end (a reconnect). */
  reopens: number;
  lastTurnAt: number | null;
  /** Turns appended (duplicates not counted). */
  turns: number;
  duplicates: number;
  /** seq of the last appended turn (the user's buffer seq). */
  lastSeq: number;
  lastAckMs: number | null;
}

/** One extraction run or failure, as the extraction lane shows it. */
export interface LaneEntry {
  agentId: string;
  userId: string;
  state: 'queued' | 'running' | 'committed' | 'failed' | 'dead-lettered';
  at: number;
  startedAt?: number;
  durationMs?: number;
  code?: string;
  message?: string;
  attempt?: number;
}

interface Second {
  sec: number;
  turns: number;
  acks: number[];
}

interface TenantState {
  calls: Map<string, LiveCall>;
  ended: LiveCall[];
  seconds: Second[];
  /** Current state per user (`agentId\nuserId`): queued or running. */
  pending: Map<string, LaneEntry>;
  /** Finished runs and failures, newest last. */
  history: LaneEntry[];
  errors: LaneEntry[];
  touched: number;
}

const SECONDS = 60;
const MAX_ACK_SAMPLES_PER_SECOND = 2000;
const MAX_HISTORY = 2000;
const MAX_ERRORS = 20;
const MAX_ENDED = 20;
/** A call with no event for this long is presumed gone (an HTTP client that never ended it). */
const CALL_IDLE_MS = 30 * 60_000;

function newCall(e: MemgateEvent, sid: string): LiveCall {
  return { sessionId: sid, agentId: e.agentId, userId: e.userId, startedAt: e.at, endedAt: null, endReason: null, reopens: 0, lastTurnAt: null, turns: 0, duplicates: 0, lastSeq: 0, lastAckMs: null };
}

/** Quantile of a sorted array (nearest rank). */
function quantile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export class LiveState {
  private readonly tenants = new Map<string, TenantState>();

  constructor(
    /** Attempts after which a failed job is dead-lettered (config.worker.maxDeliver). */
    private readonly maxDeliver: number,
    private readonly now: () => number = Date.now,
  ) {}

  private tenant(tenantId: string): TenantState {
    let t = this.tenants.get(tenantId);
    if (!t) this.tenants.set(tenantId, (t = { calls: new Map(), ended: [], seconds: [], pending: new Map(), history: [], errors: [], touched: 0 }));
    return t;
  }

  private second(t: TenantState, now: number): Second {
    const sec = Math.floor(now / 1000);
    const last = t.seconds[t.seconds.length - 1];
    if (last && last.sec === sec) return last;
    const s: Second = { sec, turns: 0, acks: [] };
    t.seconds.push(s);
    while (t.seconds.length > 0 && t.seconds[0]!.sec <= sec - SECONDS) t.seconds.shift();
    return s;
  }

  /** Take one bus event. */
  onEvent(e: MemgateEvent): void {
    const t = this.tenant(e.tenantId);
    const now = this.now();
    t.touched = now;
    const sid = e.sessionId;
    switch (e.type) {
      case 'session.started': {
        if (!sid) return;
        // A reconnect (or a reopen after the end) continues the call the dashboard already shows.
        const endedAt = t.ended.findIndex((c) => c.sessionId === sid);
        const known = t.calls.get(sid) ?? (endedAt >= 0 ? t.ended.splice(endedAt, 1)[0] : undefined);
        if (known) {
          known.reopens++;
          known.endedAt = null;
          known.endReason = null;
          t.calls.set(sid, known);
        } else t.calls.set(sid, newCall(e, sid));
        return;
      }
      case 'turn.appended': {
        const call = sid ? this.callOf(t, e, sid) : null;
        const ackMs = typeof e.data['ackMs'] === 'number' ? e.data['ackMs'] : null;
        if (call) {
          call.turns++;
          call.lastTurnAt = e.at;
          if (typeof e.data['seq'] === 'number') call.lastSeq = e.data['seq'];
          call.lastAckMs = ackMs;
        }
        const s = this.second(t, now);
        s.turns++;
        if (ackMs !== null) {
          // Reservoir sampling keeps the per-second quantiles honest under any load, in bounded memory.
          if (s.acks.length < MAX_ACK_SAMPLES_PER_SECOND) s.acks.push(ackMs);
          else {
            const i = Math.floor(Math.random() * s.turns);
            if (i < MAX_ACK_SAMPLES_PER_SECOND) s.acks[i] = ackMs;
          }
        }
        return;
      }
      case 'turn.duplicate': {
        const call = sid ? this.callOf(t, e, sid) : null;
        if (call) call.duplicates++;
        return;
      }
      case 'session.ended': {
        if (sid) {
          const call = t.calls.get(sid);
          if (call) {
            t.calls.delete(sid);
            this.ended(t, call, e.at, typeof e.data['reason'] === 'string' ? e.data['reason'] : 'end');
          }
        }
        const key = `${e.agentId}\n${e.userId}`;
        if (!t.pending.has(key)) t.pending.set(key, { agentId: e.agentId, userId: e.userId, state: 'queued', at: e.at });
        return;
      }
      case 'extraction.started':
        t.pending.set(`${e.agentId}\n${e.userId}`, { agentId: e.agentId, userId: e.userId, state: 'running', at: e.at, startedAt: e.at });
        return;
      case 'extraction.finished': {
        t.pending.delete(`${e.agentId}\n${e.userId}`);
        const durationMs = typeof e.data['durationMs'] === 'number' ? e.data['durationMs'] : undefined;
        this.record(t, { agentId: e.agentId, userId: e.userId, state: 'committed', at: e.at, ...(durationMs === undefined ? {} : { durationMs }) });
        return;
      }
      case 'extraction.failed': {
        t.pending.delete(`${e.agentId}\n${e.userId}`);
        const attempt = typeof e.data['attempt'] === 'number' ? e.data['attempt'] : 1;
        // A failed flush answered its caller; only a bus job that will not be redelivered is dead-lettered.
        const dead = e.data['flush'] !== true && (e.data['retryable'] === false || attempt >= this.maxDeliver);
        const entry: LaneEntry = { agentId: e.agentId, userId: e.userId, state: dead ? 'dead-lettered' : 'failed', at: e.at, attempt, code: String(e.data['code'] ?? 'internal') };
        if (typeof e.data['message'] === 'string') entry.message = e.data['message'];
        this.record(t, entry);
        this.error(t, entry);
        return;
      }
      case 'turn.quarantined':
        this.error(t, { agentId: e.agentId, userId: e.userId, state: 'failed', at: e.at, code: 'quarantined', message: String(e.data['reason'] ?? '') });
        return;
      default:
        return;
    }
  }

  /** A call this gateway heard of only from its turns (it started before this process did). */
  private callOf(t: TenantState, e: MemgateEvent, sid: string): LiveCall {
    let call = t.calls.get(sid);
    if (!call) t.calls.set(sid, (call = newCall(e, sid)));
    return call;
  }

  private ended(t: TenantState, call: LiveCall, at: number, reason: string): void {
    call.endedAt = at;
    call.endReason = reason;
    t.ended.push(call);
    if (t.ended.length > MAX_ENDED) t.ended.shift();
  }

  private record(t: TenantState, entry: LaneEntry): void {
    t.history.push(entry);
    if (t.history.length > MAX_HISTORY) t.history.splice(0, t.history.length - MAX_HISTORY);
  }

  private error(t: TenantState, entry: LaneEntry): void {
    t.errors.push(entry);
    if (t.errors.length > MAX_ERRORS) t.errors.shift();
  }

  /** `/v1/calls`: the tenant's active calls, recently ended ones, and per-second turns and ack latency over the last minute. */
  calls(tenantId: string): unknown {
    const t = this.tenants.get(tenantId);
    const now = this.now();
    const nowSec = Math.floor(now / 1000);
    const series = { t: [] as number[], turnsPerSec: [] as number[], ackP50Ms: [] as (number | null)[], ackP99Ms: [] as (number | null)[] };
    const bySec = new Map((t?.seconds ?? []).map((s) => [s.sec, s]));
    const all: number[] = [];
    for (let sec = nowSec - SECONDS + 1; sec <= nowSec; sec++) {
      const s = bySec.get(sec);
      const sorted = s ? [...s.acks].sort((a, b) => a - b) : [];
      series.t.push(sec);
      series.turnsPerSec.push(s?.turns ?? 0);
      series.ackP50Ms.push(quantile(sorted, 0.5));
      series.ackP99Ms.push(quantile(sorted, 0.99));
      for (const v of sorted) all.push(v);
    }
    all.sort((a, b) => a - b);
    if (t)
      for (const [sid, c] of t.calls)
        if (now - (c.lastTurnAt ?? c.startedAt) > CALL_IDLE_MS) {
          t.calls.delete(sid);
          this.ended(t, c, now, 'idle');
        }
    const calls = t ? [...t.calls.values()].sort((a, b) => b.startedAt - a.startedAt) : [];
    return {
      now,
      calls,
      ended: t ? [...t.ended].reverse() : [],
      lastMinute: { turns: series.turnsPerSec.reduce((a, b) => a + b, 0), ackP50Ms: quantile(all, 0.5), ackP99Ms: quantile(all, 0.99) },
      series,
    };
  }

  /** `/v1/extraction`: the tenant's extraction lane over the last `windowMs`. */
  extraction(tenantId: string, windowMs: number): unknown {
    const t = this.tenants.get(tenantId);
    const now = this.now();
    const since = now - windowMs;
    const recent = (t?.history ?? []).filter((h) => h.at >= since);
    const pending = t ? [...t.pending.values()] : [];
    const count = (s: LaneEntry['state'], list: LaneEntry[]) => list.filter((h) => h.state === s).length;
    const durations = recent.flatMap((h) => (h.state === 'committed' && h.durationMs !== undefined ? [h.durationMs] : [])).sort((a, b) => a - b);
    return {
      now,
      windowMs,
      counts: {
        queued: count('queued', pending),
        running: count('running', pending),
        committed: count('committed', recent),
        failed: count('failed', recent),
        deadLettered: count('dead-lettered', recent),
      },
      pending,
      recent: recent.slice(-50).reverse(),
      errors: t ? [...t.errors].reverse() : [],
      windowLatencyMs: { p50: quantile(durations, 0.5), p99: quantile(durations, 0.99), max: durations.length ? durations[durations.length - 1]! : null },
      latency: recent.flatMap((h) => (h.state === 'committed' && h.durationMs !== undefined ? [{ at: h.at, durationMs: h.durationMs }] : [])),
    };
  }
}
