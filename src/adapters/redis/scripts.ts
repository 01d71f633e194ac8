import type { Redis } from 'ioredis';

/**
 * Lua scripts of the Redis adapters. Each runs atomically on the server, so a
 * read-modify-write (idempotency check + seq + token counter, compare-and-delete)
 * can never interleave with a concurrent append from another gateway. All KEYS
 * of one script share a hash tag (see keys.ts), so they also run on Redis Cluster.
 */

/**
 * KEYS: meta, ids, turns. ARGV: turnId, encoded turn, tokens.
 * Returns {seq, duplicate 0|1, pendingTokens, encoded original or nil}.
 * The stream entry id is `<seq>-0`, so the seq needs no field of its own and
 * XDEL by id never touches turns appended meanwhile.
 */
export const APPEND_TURN = `
local known = redis.call('HGET', KEYS[2], ARGV[1])
if known then
  local id = known .. '-0'
  local entry = redis.call('XRANGE', KEYS[3], id, id)[1]
  local pending = tonumber(redis.call('HGET', KEYS[1], 'tokens') or '0')
  local data = false
  if entry then
    local f = entry[2]
    for i = 1, #f, 2 do if f[i] == 'd' then data = f[i + 1] end end
  end
  return {tonumber(known), 1, pending, data}
end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
redis.call('XADD', KEYS[3], seq .. '-0', 'd', ARGV[2], 'k', ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], seq)
local pending = redis.call('HINCRBY', KEYS[1], 'tokens', ARGV[3])
return {seq, 0, pending, false}
`;

/**
 * KEYS: meta, ids, turns, retired. ARGV: now (ms), horizon (ms, 0 = forever),
 * turnIds. XDELs each turn still in the stream and subtracts exactly its own
 * tokens, in the same atomic step, so a concurrent append's increment is never
 * lost. Idempotency entries stay for `horizon` after removal (a retry of an
 * archived turn within it is still a duplicate): each removed id is stamped in
 * the `retired` sorted set, and ids retired longer ago than that leave both, at
 * most 1,000 per call, so the hash stays bounded by the buffered turns plus one
 * horizon's worth. Returns {removed, pendingTokens}.
 */
export const REMOVE_TURNS = `
local now = tonumber(ARGV[1])
local horizon = tonumber(ARGV[2])
local removed = 0
local tokens = 0
for i = 3, #ARGV do
  local turnId = ARGV[i]
  local seq = redis.call('HGET', KEYS[2], turnId)
  if seq then
    local id = seq .. '-0'
    local entry = redis.call('XRANGE', KEYS[3], id, id)[1]
    if entry then
      local f = entry[2]
      for j = 1, #f, 2 do if f[j] == 'k' then tokens = tokens + tonumber(f[j + 1]) end end
      removed = removed + redis.call('XDEL', KEYS[3], id)
      if horizon > 0 then redis.call('ZADD', KEYS[4], now, turnId) end
    end
  end
end
local pending = tonumber(redis.call('HGET', KEYS[1], 'tokens') or '0')
if tokens > 0 then
  pending = pending - tokens
  if pending < 0 then pending = 0 end
  redis.call('HSET', KEYS[1], 'tokens', pending)
end
if horizon > 0 then
  local old = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now - horizon, 'LIMIT', 0, 1000)
  if #old > 0 then
    redis.call('HDEL', KEYS[2], unpack(old))
    redis.call('ZREM', KEYS[4], unpack(old))
  end
end
return {removed, pending}
`;

/**
 * KEYS: session. ARGV: tenantId, agentId, userId, startedAt, ttlMs (0 = none), holder ('' = none).
 * The first open fixes the owner, in one atomic step (two users racing for one id get one owner); a
 * later open by the owner is a reconnect: the next generation, live again, held by `holder` (the
 * gateway with its socket) and with no deferred end. Returns {status opened | existing | reopened |
 * conflict, agentId, userId, startedAt, endedAt or false, generation, holder or false, dueAt or false}.
 */
export const OPEN_SESSION = `
local h = redis.call('HMGET', KEYS[1], 'agentId', 'userId', 'startedAt', 'endedAt', 'generation', 'holder', 'dueAt')
if h[1] then
  if h[1] ~= ARGV[2] or h[2] ~= ARGV[3] then return {'conflict', h[1], h[2], h[3], h[4] or false, tonumber(h[5] or '1'), h[6] or false, h[7] or false} end
  -- A session stored before generations existed is generation 1.
  local gen = redis.call('HINCRBY', KEYS[1], 'generation', h[5] and 1 or 2)
  local status = 'existing'
  if h[4] then status = 'reopened' end
  redis.call('HDEL', KEYS[1], 'endedAt', 'dueAt', 'holder')
  if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'holder', ARGV[6]) end
  if tonumber(ARGV[5]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[5]) end
  return {status, h[1], h[2], h[3], false, gen, ARGV[6] ~= '' and ARGV[6] or false, false}
end
redis.call('HSET', KEYS[1], 'tenantId', ARGV[1], 'agentId', ARGV[2], 'userId', ARGV[3], 'startedAt', ARGV[4], 'generation', 1)
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'holder', ARGV[6]) end
if tonumber(ARGV[5]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[5]) end
return {'opened', ARGV[2], ARGV[3], ARGV[4], false, 1, ARGV[6] ~= '' and ARGV[6] or false, false}
`;

/**
 * KEYS: session. ARGV: endedAt, ttlMs (0 = none), generation ('' = any). No-op for an unknown
 * session (never creates a partial one) and, given a generation, for a session started again
 * since or already ended. Returns {1, holder it had or false} when it marked the session ended, {0, false} otherwise.
 */
export const END_SESSION = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, false} end
local h = redis.call('HMGET', KEYS[1], 'generation', 'endedAt', 'holder')
if ARGV[3] ~= '' then
  if tonumber(h[1] or '1') ~= tonumber(ARGV[3]) or h[2] then return {0, false} end
end
redis.call('HSET', KEYS[1], 'endedAt', ARGV[1])
redis.call('HDEL', KEYS[1], 'holder', 'dueAt')
if tonumber(ARGV[2]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {1, h[3] or false}
`;

/**
 * KEYS: session. ARGV: generation, dueAt. A deferred end: a live session still at that generation
 * is marked to end at `dueAt` and held by nobody (its socket closed). Returns {1, holder it had or
 * false} when it marked it, {0, false} otherwise.
 */
export const DEFER_END = `
local h = redis.call('HMGET', KEYS[1], 'agentId', 'generation', 'endedAt', 'holder')
if not h[1] or h[3] or tonumber(h[2] or '1') ~= tonumber(ARGV[1]) then return {0, false} end
redis.call('HSET', KEYS[1], 'dueAt', ARGV[2])
redis.call('HDEL', KEYS[1], 'holder')
return {1, h[4] or false}
`;

/** KEYS: sorted set. ARGV: member, score. Adds the member, or raises its score; never lowers it (a late older lease). */
export const RAISE_SCORE = `
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) >= tonumber(ARGV[2]) then return 0 end
return redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
`;

/** KEYS: sorted set. ARGV: member, score as read. Removes the member only if its score is still that (no newer entry is lost). */
export const REMOVE_IF_SCORE = `
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
`;

/**
 * KEYS: lock, fence. ARGV: holder value, ttlMs. The fencing token is INCRed in
 * the same step as the SET NX, so tokens follow acquisition order exactly.
 * Returns the token, or nil when the lock is held.
 */
export const ACQUIRE_LOCK = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return false
`;

/** KEYS: lock. ARGV: holder value. Deletes only our own lease (never a successor's). */
export const RENEW_LOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

export const RELEASE_LOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** A server-side script bound to one connection: EVALSHA, falling back to EVAL once per connection. */
export type BoundScript = (keys: readonly string[], args: ReadonlyArray<string | number | Buffer>) => Promise<unknown>;

type ScriptFn = (...args: Array<string | number | Buffer>) => Promise<unknown>;

/**
 * Registers `lua` on `redis` under `name` (ioredis `defineCommand`, which keeps
 * the SHA and works inside auto-pipelines). `buffers` asks for bulk replies as
 * Buffers (binary msgpack payloads).
 */
export function bindScript(redis: Redis, name: string, lua: string, numberOfKeys: number, buffers = false): BoundScript {
  redis.defineCommand(name, { lua, numberOfKeys });
  const fn = (redis as unknown as Record<string, ScriptFn | undefined>)[buffers ? `${name}Buffer` : name];
  if (fn === undefined) throw new Error(`ioredis did not define script ${name}`);
  return (keys, args) => fn.call(redis, ...keys, ...args);
}
