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
 */
import type { Redis } from 'ioredis';
import { turnFields } from '../../core/turn-fields.ts';
import type { Scope, Turn } from '../../core/types.ts';
import type { AppendOutcome, NewSession, OpenOutcome, SessionRecord, TurnBuffer } from '../../ports/turn-buffer.ts';
import { MemgateError } from '../../core/errors.ts';
import { CONFIG_DEFAULTS } from '../../config/config-schema.ts';
import { guarded } from './create-redis.ts';
import { sessionKey, userKeys, type UserKeys } from './keys.ts';
import { APPEND_TURN, bindScript, END_SESSION, OPEN_SESSION, REMOVE_TURNS, type BoundScript } from './scripts.ts';
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
    this.openScript = bindScript(redis, 'memgateOpenSession2', OPEN_SESSION, 1);
    this.endScript = bindScript(redis, 'memgateEndSession', END_SESSION, 1);
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
    // The index entry first, so `forget` finds every session hash. One connection runs commands
    // in the order they were sent: both go in one auto-pipelined write, one round trip on the start path.
    const key = sessionKey(this.prefix, scope.tenantId, record.sessionId);
    const [, reply] = await guarded(
      'openSession',
      Promise.all([
        this.redis.sadd(this.keys(scope).sessions, record.sessionId),
        this.openScript([key], [scope.tenantId, scope.agentId, scope.userId, record.startedAt, this.sessionTtlMs]) as Promise<[OpenOutcome['status'], string, string, string, string | null, number]>,
      ]),
    );
    const [status, agentId, userId, startedAt, endedAt, generation] = reply;
    const session: SessionRecord = {
      sessionId: record.sessionId,
      scope: { tenantId: scope.tenantId, agentId, userId },
      startedAt: Number(startedAt),
      endedAt: endedAt ? Number(endedAt) : null,
      generation: Number(generation),
    };
    // The SADD above put the id in this user's index: take it out again (the owner's session is never this user's to forget).
    if (status === 'conflict') await guarded('openSession', this.redis.srem(this.keys(scope).sessions, record.sessionId));
    else if (status === 'opened' && record.endedAt !== null) {
      await this.endSession(scope.tenantId, record.sessionId, record.endedAt);
      session.endedAt = record.endedAt;
    }
    return { status, session };
  }

  async getSession(tenantId: string, sessionId: string): Promise<SessionRecord | null> {
    const h = await guarded('getSession', this.redis.hgetall(sessionKey(this.prefix, tenantId, sessionId)));
    const { agentId, userId, startedAt, endedAt, generation } = h;
    if (agentId === undefined || userId === undefined || startedAt === undefined) return null;
    return {
      sessionId,
      scope: { tenantId: h['tenantId'] ?? tenantId, agentId, userId },
      startedAt: Number(startedAt),
      endedAt: endedAt === undefined ? null : Number(endedAt),
      generation: generation === undefined ? 1 : Number(generation),
    };
  }

  async endSession(tenantId: string, sessionId: string, endedAt: number, ifGeneration?: number): Promise<boolean> {
    const marked = await guarded('endSession', this.endScript([sessionKey(this.prefix, tenantId, sessionId)], [endedAt, this.sessionTtlMs, ifGeneration ?? '']));
    return marked === 1;
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
