/**
 * The production turn buffer on Redis (docs/design.md §2: an acked turn is never lost).
 *
 * Persistence requirement: an append is acked as soon as Redis has applied it,
 * so durability is exactly Redis's. Run Redis with `appendonly yes`:
 * - `appendfsync everysec` (recommended): Redis writes the AOF before it sends
 *   the reply, so a crash of the Redis *process* loses nothing; a power loss or
 *   kernel crash may lose the last ~1 s of acked turns. Costs almost nothing.
 * - `appendfsync always`: fsync before every reply; survives power loss, but
 *   every ack waits on the disk (batched by auto-pipelining, still ~0.1–2 ms
 *   per fsync on SSD, far more on network disks): check the p99 < 10 ms target.
 * Without AOF (RDB snapshots only) minutes of acked turns can vanish: do not.
 * Replication is asynchronous: a failover may drop the last acked writes;
 * `min-replicas-to-write` + `min-replicas-max-lag` bound that window. Turn keys carry no TTL: use `maxmemory-policy noeviction` (or a
 * `volatile-*` policy, which may then evict only cache entries and sessions);
 * never an `allkeys-*` policy, which would evict acked turns.
 *
 * Layout per agent+user (one hash tag, see keys.ts): a stream of turns with
 * entry id `<seq>-0`; a meta hash {seq, tokens}; an idempotency hash turnId →
 * seq that outlives removal by `idempotencyHorizonMs` (a sorted set stamps each
 * removal so later removals can drop what is past it); a set of session ids.
 * The sweep of dropped calls reads three indexes beside (keys.ts `sweepKeys`, `heldKey`):
 * deferred ends by due time, gateway leases, the sessions each gateway holds. They are
 * hints, written before the session hash they point at; the hash decides, and a sweep
 * drops the entries it finds stale.
 */
import type { Redis } from 'ioredis';
import { turnFields } from '../../core/turn-fields.ts';
import type { Scope, Turn } from '../../core/types.ts';
import type { AppendOutcome, NewSession, OpenOutcome, SessionRecord, TurnBuffer } from '../../ports/turn-buffer.ts';
import { MemgateError } from '../../core/errors.ts';
import { CONFIG_DEFAULTS } from '../../config/config-schema.ts';
import { guarded } from './create-redis.ts';
import { callMember, heldKey, sessionKey, sweepKeys, userKeys, type UserKeys } from './keys.ts';
import { APPEND_TURN, bindScript, DEFER_END, END_SESSION, OPEN_SESSION, RAISE_SCORE, REMOVE_IF_SCORE, REMOVE_TURNS, type BoundScript } from './scripts.ts';
import { decodeTurn, encodeTurn, entryField, seqOfEntryId } from './turn-codec.ts';

/** Options of {@link RedisTurnBuffer}. */
export interface RedisTurnBufferOptions {
  /** Session records expire this long after their last open/end (0 = never). Default 30 days. */
  sessionTtlMs?: number;
  /**
   * How long a turn's id still dedupes retries after the turn left the buffer
   * (0 = forever, one hash field per turn ever appended). Default 7 days:
   * clients retry within seconds, a replayed backlog within days.
   */
  idempotencyHorizonMs?: number;
  /** Quit the connection on `close()` (true when the buffer owns it). */
  closeConnection?: boolean;
  /** Clock of the removal stamps (tests move it). */
  now?: () => number;
  /**
   * Longest an append waits for Redis before it is answered `unavailable` (default: config `redis.appendDeadlineMs`).
   * A caller on a live voice turn cannot hold it for seconds; it retries by turnId, and a
   * write that lands after the deadline makes that retry a `duplicate`, never a second turn.
   */
  appendDeadlineMs?: number;
}

const DEFAULT_SESSION_TTL_MS = 30 * 24 * 3_600_000;

type AppendReply = [number, number, number, Buffer | null];
/** An end's or a deferred end's reply: whether it marked the session, and the holder it had. */
type MarkReply = [number, string | null];
type OpenReply = [OpenOutcome['status'], string, string, string, string | null, number, string | null, string | null];

/** Gone gateways a sweep looks at, at most (each is looked at again on the next sweep while it holds calls). */
const GONE_PER_SWEEP = 20;

/** TurnBuffer on Redis streams; every write is one atomic Lua script (see scripts.ts). */
export class RedisTurnBuffer implements TurnBuffer {
  private readonly prefix: string;
  private readonly sessionTtlMs: number;
  private readonly horizonMs: number;
  private readonly now: () => number;
  private readonly closeConnection: boolean;
  private readonly appendDeadlineMs: number;
  private readonly appendScript: BoundScript;
  private readonly removeScript: BoundScript;
  private readonly openScript: BoundScript;
  private readonly endScript: BoundScript;
  private readonly deferScript: BoundScript;
  private readonly raiseScript: BoundScript;
  private readonly removeIfScript: BoundScript;
  private readonly sweep: { due: string; leases: string };

  /** `keyPrefix`: prefix of every key (config `redis.keyPrefix`). The connection stays the caller's unless `closeConnection`. */
  constructor(
    private readonly redis: Redis,
    keyPrefix = 'mg:',
    options: RedisTurnBufferOptions = {},
  ) {
    this.prefix = keyPrefix;
    this.sessionTtlMs = options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS;
    this.horizonMs = options.idempotencyHorizonMs ?? CONFIG_DEFAULTS.redis.idempotencyHorizonMs;
    this.now = options.now ?? Date.now;
    this.closeConnection = options.closeConnection ?? false;
    this.appendDeadlineMs = options.appendDeadlineMs ?? CONFIG_DEFAULTS.redis.appendDeadlineMs;
    this.appendScript = bindScript(redis, 'memgateAppendTurn', APPEND_TURN, 3, true);
    this.removeScript = bindScript(redis, 'memgateRemoveTurns', REMOVE_TURNS, 4);
    this.openScript = bindScript(redis, 'memgateOpenSession3', OPEN_SESSION, 1);
    this.endScript = bindScript(redis, 'memgateEndSession2', END_SESSION, 1);
    this.deferScript = bindScript(redis, 'memgateDeferEnd', DEFER_END, 1);
    this.raiseScript = bindScript(redis, 'memgateRaiseScore', RAISE_SCORE, 1);
    this.removeIfScript = bindScript(redis, 'memgateRemoveIfScore', REMOVE_IF_SCORE, 1);
    this.sweep = sweepKeys(keyPrefix);
  }

  /**
   * One round trip. A duplicate whose original already left the stream (archived)
   * is answered from the idempotency hash: original seq, the retried body.
   */
  async append(scope: Scope, sessionId: string, turn: Omit<Turn, 'seq' | 'turnId'> & { turnId: string }): Promise<AppendOutcome> {
    const stored = turnFields(turn, sessionId);
    const k = this.keys(scope);
    // The counter is an integer (HINCRBY); token estimates are integers already, this only guards odd callers.
    const tokens = Number.isFinite(turn.tokens) ? Math.max(0, Math.round(turn.tokens)) : 0;
    // Lost the connection: ioredis would queue the write until it reconnects; answer now instead.
    if (LOST.has(this.redis.status)) throw new MemgateError('unavailable', `redis append failed: connection ${this.redis.status}; retry with the same turnId`);
    const write = this.appendScript([k.meta, k.ids, k.turns], [turn.turnId, encodeTurn(stored), tokens]);
    const reply = (await guarded('append', withDeadline(write, this.appendDeadlineMs))) as AppendReply;
    const [seq, duplicate, pendingTokens, original] = reply;
    if (duplicate === 1 && original !== null) {
      return { turn: decodeTurn(original, seq), duplicate: true, pendingTokens };
    }
    return { turn: { ...stored, seq }, duplicate: duplicate === 1, pendingTokens };
  }

  async list(scope: Scope): Promise<Turn[]> {
    const entries = await guarded('list', this.redis.xrangeBuffer(this.keys(scope).turns, '-', '+'));
    const turns: Turn[] = [];
    for (const [id, fields] of entries) {
      const data = entryField(fields, 'd');
      if (data !== undefined) turns.push(decodeTurn(data, seqOfEntryId(id)));
    }
    return turns;
  }

  async latest(scope: Scope, limit: number): Promise<Turn[]> {
    const n = Math.max(0, Math.floor(limit));
    if (n === 0) return [];
    const entries = await guarded('latest', this.redis.xrevrangeBuffer(this.keys(scope).turns, '+', '-', 'COUNT', n));
    const turns: Turn[] = [];
    for (const [id, fields] of entries) {
      const data = entryField(fields, 'd');
      if (data !== undefined) turns.push(decodeTurn(data, seqOfEntryId(id)));
    }
    return turns.reverse();
  }

  async remove(scope: Scope, turnIds: readonly string[]): Promise<void> {
    if (turnIds.length === 0) return;
    const k = this.keys(scope);
    await guarded('remove', this.removeScript([k.meta, k.ids, k.turns, k.retired], [this.now(), this.horizonMs, ...turnIds]));
  }

  async pendingTokens(scope: Scope): Promise<number> {
    const value = await guarded('pendingTokens', this.redis.hget(this.keys(scope).meta, 'tokens'));
    return value === null ? 0 : Number(value);
  }

  async openSession(record: NewSession): Promise<OpenOutcome> {
    const { scope } = record;
    const holder = record.endedAt === null ? (record.holder ?? '') : '';
    // The index entries first, so `forget` finds every session hash and a sweep every held call. One
    // connection runs commands in the order they were sent: all go in one auto-pipelined write, one
    // round trip on the start path.
    const key = sessionKey(this.prefix, scope.tenantId, record.sessionId);
    const member = callMember(scope.tenantId, record.sessionId);
    const [, , reply] = await guarded(
      'openSession',
      Promise.all([
        this.redis.sadd(this.keys(scope).sessions, record.sessionId),
        holder === '' ? null : this.redis.sadd(heldKey(this.prefix, holder), member),
        this.openScript([key], [scope.tenantId, scope.agentId, scope.userId, record.startedAt, this.sessionTtlMs, holder]) as Promise<OpenReply>,
      ]),
    );
    const [status, agentId, userId, startedAt, endedAt, generation, heldBy, dueAt] = reply;
    const session = toSessionRecord(record.sessionId, scope.tenantId, { agentId, userId, startedAt, endedAt, generation, holder: heldBy, dueAt });
    if (status === 'conflict') {
      // The SADDs above put the id in this user's index and this holder's: take it out again (the owner's session is never this user's to forget).
      await guarded('openSession', Promise.all([this.redis.srem(this.keys(scope).sessions, record.sessionId), holder === '' ? null : this.redis.srem(heldKey(this.prefix, holder), member)]));
    } else if (status === 'opened' && record.endedAt !== null) {
      await this.endSession(scope.tenantId, record.sessionId, record.endedAt);
      session.endedAt = record.endedAt;
    }
    return { status, session };
  }

  async getSession(tenantId: string, sessionId: string): Promise<SessionRecord | null> {
    const h = await guarded('getSession', this.redis.hgetall(sessionKey(this.prefix, tenantId, sessionId)));
    if (h['agentId'] === undefined || h['userId'] === undefined || h['startedAt'] === undefined) return null;
    return toSessionRecord(sessionId, h['tenantId'] ?? tenantId, h);
  }

  async endSession(tenantId: string, sessionId: string, endedAt: number, ifGeneration?: number): Promise<boolean> {
    const reply = await guarded('endSession', this.endScript([sessionKey(this.prefix, tenantId, sessionId)], [endedAt, this.sessionTtlMs, ifGeneration ?? '']));
    return this.released(tenantId, sessionId, reply as MarkReply);
  }

  async deferEnd(tenantId: string, sessionId: string, generation: number, dueAt: number): Promise<boolean> {
    // The index entry first (see openSession); a stale one is dropped by a later sweep.
    const [, reply] = await guarded(
      'deferEnd',
      Promise.all([this.redis.zadd(this.sweep.due, dueAt, callMember(tenantId, sessionId)), this.deferScript([sessionKey(this.prefix, tenantId, sessionId)], [generation, dueAt])]),
    );
    return this.released(tenantId, sessionId, reply as MarkReply);
  }

  /** A session no longer held: out of its holder's set, or that set would grow with every call a live gateway ever held. */
  private async released(tenantId: string, sessionId: string, [marked, holder]: MarkReply): Promise<boolean> {
    if (marked === 1 && holder !== null) await guarded('endSession', this.redis.srem(heldKey(this.prefix, holder), callMember(tenantId, sessionId)));
    return marked === 1;
  }

  async renewLease(holder: string, until: number): Promise<void> {
    await guarded('renewLease', this.raiseScript([this.sweep.leases], [holder, until]));
  }

  async dueSessions(now: number, graceMs: number, limit: number): Promise<SessionRecord[]> {
    const n = Math.max(0, Math.floor(limit));
    if (n === 0) return [];
    const out: SessionRecord[] = [];
    // Deferred ends that came due; entries of sessions ended or started again since are dropped (then the
    // next window is read, so stale entries never hide due ones; a few windows per sweep at most).
    const stale: Array<Promise<unknown>> = [];
    for (let kept = 0, round = 0; out.length < n && round < 4; round++) {
      const want = n - out.length;
      const due = pairs(await guarded('dueSessions', this.redis.zrangebyscore(this.sweep.due, '-inf', now, 'WITHSCORES', 'LIMIT', kept, want)));
      const records = await Promise.all(due.map(([member]) => this.sessionOf(member)));
      const dropped = due.map(([member, score], i) => {
        const r = records[i];
        if (!r || r.endedAt !== null || r.dueAt === undefined) return this.removeIfScript([this.sweep.due], [member, score]);
        // Due: returned (its entry goes once it ended). Else a later deferred end re-scored the entry itself: keep it.
        if (r.dueAt <= now) out.push(r);
        kept++;
        return null;
      });
      await guarded('dueSessions', Promise.all(dropped));
      if (due.length < want) break;
    }
    // Calls held by gateways whose lease ran out at least `graceMs` ago.
    const gone = pairs(await guarded('dueSessions', this.redis.zrangebyscore(this.sweep.leases, '-inf', now - graceMs, 'WITHSCORES', 'LIMIT', 0, GONE_PER_SWEEP)));
    for (const [holder, score] of gone) {
      if (out.length >= n) break;
      const held = heldKey(this.prefix, holder);
      const members = await guarded('dueSessions', this.redis.smembers(held));
      const records = await Promise.all(members.map((m) => this.sessionOf(m)));
      let holds = 0;
      members.forEach((member, i) => {
        const r = records[i];
        if (r && r.endedAt === null && r.holder === holder) {
          holds++;
          if (out.length < n) out.push(r);
        } else stale.push(this.redis.srem(held, member));
      });
      // Holds nothing any more: forget it, unless it renewed meanwhile (a gateway back from a long pause).
      if (holds === 0) stale.push(this.removeIfScript([this.sweep.leases], [holder, score]));
    }
    await guarded('dueSessions', Promise.all(stale));
    return out;
  }

  async seqOf(scope: Scope, turnId: string): Promise<number | null> {
    const seq = await guarded('seqOf', this.redis.hget(this.keys(scope).ids, turnId));
    return seq === null ? null : Number(seq);
  }

  async forget(scope: Scope): Promise<void> {
    const k = this.keys(scope);
    const sessionIds = await guarded('forget', this.redis.smembers(k.sessions));
    // Session hashes live in other slots: one DEL each (auto-pipelined into one write).
    await guarded('forget', Promise.all(sessionIds.map((id) => this.redis.del(sessionKey(this.prefix, scope.tenantId, id)))));
    await guarded('forget', this.redis.del(k.turns, k.meta, k.ids, k.retired, k.sessions));
  }

  async close(): Promise<void> {
    if (this.closeConnection && this.redis.status !== 'end') await this.redis.quit();
  }

  private keys(scope: Scope): UserKeys {
    return userKeys(this.prefix, scope);
  }

  /** The session an index member names (null when gone). */
  private sessionOf(member: string): Promise<SessionRecord | null> {
    const [tenantId, sessionId] = JSON.parse(member) as [string, string];
    return this.getSession(tenantId, sessionId);
  }
}

/** A session hash's fields as a record; `holder` and `dueAt` present only when set. */
function toSessionRecord(sessionId: string, tenantId: string, h: Record<string, string | number | null | undefined>): SessionRecord {
  const record: SessionRecord = {
    sessionId,
    scope: { tenantId, agentId: String(h['agentId']), userId: String(h['userId']) },
    startedAt: Number(h['startedAt']),
    endedAt: h['endedAt'] === undefined || h['endedAt'] === null || h['endedAt'] === '' ? null : Number(h['endedAt']),
    generation: h['generation'] === undefined || h['generation'] === null ? 1 : Number(h['generation']),
  };
  if (typeof h['holder'] === 'string' && h['holder'] !== '') record.holder = h['holder'];
  if (h['dueAt'] !== undefined && h['dueAt'] !== null && h['dueAt'] !== '') record.dueAt = Number(h['dueAt']);
  return record;
}

/** `[member, score, member, score, ...]` (WITHSCORES) as pairs. */
function pairs(flat: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
}

/** Connection states after a loss (the first connect, 'connecting', is left to the deadline). */
const LOST = new Set(['reconnecting', 'close', 'end']);

/** `work`, or `unavailable` after `ms` (the work itself may still complete: appends are idempotent by turnId). */
function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new MemgateError('unavailable', `redis append gave no answer within ${ms} ms; retry with the same turnId`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
