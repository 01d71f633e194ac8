import type { Scope } from '../../core/types.ts';

/**
 * Escapes the characters that give a key part structure (`:` separates parts,
 * `{`/`}` delimit the cluster hash tag, `%` is the escape itself), so ids such
 * as `a:b` can never make two users' keys collide or move the hash tag.
 */
export function keyPart(id: string): string {
  return /[%:{}]/.test(id) ? id.replace(/[%:{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`) : id;
}

/**
 * Every key of one agent+user shares the hash tag `{user}`, so a Lua script
 * touching several of them stays in one Redis Cluster slot.
 */
export interface UserKeys {
  /** Stream of buffered turns; entry id `<seq>-0`. */
  readonly turns: string;
  /** Hash: `seq` (last issued) and `tokens` (buffered, un-extracted). */
  readonly meta: string;
  /** Hash turnId → seq: idempotency, kept for a horizon after the turn leaves the stream. */
  readonly ids: string;
  /** Sorted set turnId → removal time (ms): which idempotency entries to drop once past the horizon. */
  readonly retired: string;
  /** Set of the user's session ids, so `forget` can find the session hashes. */
  readonly sessions: string;
  /** msgpack SessionContext (the context cache). */
  readonly context: string;
}

/** Key layout of one agent+user under `prefix`. */
export function userKeys(prefix: string, scope: Scope): UserKeys {
  const base = `${prefix}${keyPart(scope.tenantId)}:${keyPart(scope.agentId)}:{${keyPart(scope.userId)}}`;
  return {
    turns: `${base}:turns`,
    meta: `${base}:meta`,
    ids: `${base}:ids`,
    retired: `${base}:retired`,
    sessions: `${base}:sessions`,
    context: `${base}:ctx`,
  };
}

/** Session hash: found by tenant + session id alone (HTTP appends carry no user). */
export function sessionKey(prefix: string, tenantId: string, sessionId: string): string {
  return `${prefix}${keyPart(tenantId)}:session:{${keyPart(sessionId)}}`;
}

/** Lock value key and its never-expiring fencing counter, in one slot. */
export function lockKeys(prefix: string, key: string): { lock: string; fence: string } {
  const base = `${prefix}lock:{${keyPart(key)}}`;
  return { lock: base, fence: `${base}:fence` };
}

/**
 * The sweep's indexes (docs/protocol.md, "Call lifecycle"), each one key: `due`, a sorted set of
 * sessions with a deferred end by due time; `leases`, a sorted set of gateways by lease end. Members
 * name sessions as {@link callMember}. The session hash stays the truth; these only find candidates.
 */
export function sweepKeys(prefix: string): { due: string; leases: string } {
  return { due: `${prefix}calls:due`, leases: `${prefix}calls:leases` };
}

/** Set of the sessions one gateway holds (a hint: the session hash's `holder` decides). */
export function heldKey(prefix: string, holder: string): string {
  return `${prefix}calls:held:{${keyPart(holder)}}`;
}

/** A session as a member of the sweep's indexes. */
export function callMember(tenantId: string, sessionId: string): string {
  return JSON.stringify([tenantId, sessionId]);
}
