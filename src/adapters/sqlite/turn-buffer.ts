import type { Scope, Turn } from '../../core/types.ts';
import type { AppendOutcome, NewSession, OpenOutcome, SessionRecord, TurnBuffer } from '../../ports/turn-buffer.ts';
import type { Database } from './database.ts';
import { GroupCommit } from './group-commit.ts';
import { migrate } from './migrations.ts';
import { SqliteSessionTable } from './session-table.ts';
import { rowToTurn, toStoredTurn, turnParams, type TurnRow } from './turn-row.ts';

type TurnToAppend = Omit<Turn, 'seq' | 'turnId'> & { turnId: string };

interface UserRow {
  uid: number;
  pending_tokens: number;
}

/**
 * The embedded hot turn buffer. An append commits in an IMMEDIATE transaction
 * before its outcome is returned: alone and synchronously when the loop is quiet
 * (the gateway acks without a microtask hop), or, in a burst, together with the
 * other appends of the same event-loop iteration (a Promise then; see
 * GroupCommit). Every other operation on turns first commits an open group, so
 * they apply in call order (sessions live in their own table and need not wait:
 * HTTP appends look theirs up first). Session opens group-commit the same way
 * (a start at saturation paid a whole commit, ~100 µs, for one small row), and
 * every other session operation commits their open group first. Counters live
 * in `tb_users` so `pendingTokens` is one indexed read.
 *
 * Five statements per append on purpose: a three-statement variant (an UPSERT
 * that bumps the counters, INSERT ... ON CONFLICT DO NOTHING for the key) measured
 * no faster, because the cost is in the pages a commit writes, not the statements.
 */
export class SqliteTurnBuffer implements TurnBuffer {
  private readonly sessions: SqliteSessionTable;
  private readonly q;
  private readonly appends: GroupCommit<[Scope, string, TurnToAppend], AppendOutcome>;
  private readonly opens: GroupCommit<[NewSession], OpenOutcome>;
  private readonly removeTx;
  private readonly forgetTx;

  /** `db` is shared and stays open after `close()`: its opener closes it. */
  constructor(db: Database) {
    migrate(db);
    this.sessions = new SqliteSessionTable(db);
    this.opens = new GroupCommit(db, (record: NewSession) => this.sessions.open(record));
    this.q = {
      user: db.prepare<[string, string, string], UserRow>('SELECT uid, pending_tokens FROM tb_users WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
      newUser: db.prepare<[string, string, string], { uid: number }>('INSERT INTO tb_users (tenant_id, agent_id, user_id) VALUES (?, ?, ?) RETURNING uid'),
      bump: db.prepare<[number, number], { last_seq: number; pending_tokens: number }>(
        'UPDATE tb_users SET last_seq = last_seq + 1, pending_tokens = pending_tokens + ? WHERE uid = ? RETURNING last_seq, pending_tokens',
      ),
      release: db.prepare('UPDATE tb_users SET pending_tokens = MAX(0, pending_tokens - ?) WHERE uid = ?'),
      idOf: db.prepare<[number, string], { seq: number; removed: string | null }>('SELECT seq, removed FROM tb_ids WHERE uid = ? AND turn_id = ?'),
      insertId: db.prepare('INSERT INTO tb_ids (uid, turn_id, seq) VALUES (?, ?, ?)'),
      markRemoved: db.prepare('UPDATE tb_ids SET removed = ? WHERE uid = ? AND turn_id = ?'),
      insertTurn: db.prepare(
        `INSERT INTO tb_turns (uid, seq, turn_id, session_id, role, text, ts, received_at, tokens, speaker, asr_confidence, interrupted)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      turnAt: db.prepare<[number, number], TurnRow>('SELECT * FROM tb_turns WHERE uid = ? AND seq = ?'),
      deleteTurn: db.prepare<[number, number], TurnRow>('DELETE FROM tb_turns WHERE uid = ? AND seq = ? RETURNING *'),
      list: db.prepare<[number], TurnRow>('SELECT * FROM tb_turns WHERE uid = ? ORDER BY seq'),
      latest: db.prepare<[number, number], TurnRow>('SELECT * FROM tb_turns WHERE uid = ? ORDER BY seq DESC LIMIT ?'),
      forgetTurns: db.prepare('DELETE FROM tb_turns WHERE uid = ?'),
      forgetIds: db.prepare('DELETE FROM tb_ids WHERE uid = ?'),
      forgetUser: db.prepare('DELETE FROM tb_users WHERE uid = ?'),
    };
    // IMMEDIATE takes the write lock up front: a deferred read-then-write transaction
    // could fail with SQLITE_BUSY_SNAPSHOT instead of waiting out busy_timeout.
    this.appends = new GroupCommit(db, (scope: Scope, sessionId: string, input: TurnToAppend) => this.appendIn(scope, sessionId, input));
    this.removeTx = db.transaction((scope: Scope, turnIds: readonly string[]) => this.removeIn(scope, turnIds)).immediate;
    this.forgetTx = db.transaction((scope: Scope) => this.forgetIn(scope)).immediate;
  }

  /** Durable append: the outcome itself when committed alone, a Promise of it when it joined a group commit. */
  append(scope: Scope, sessionId: string, turn: TurnToAppend): AppendOutcome | Promise<AppendOutcome> {
    return this.appends.run(scope, sessionId, turn);
  }

  async list(scope: Scope): Promise<Turn[]> {
    this.appends.flush();
    const user = this.user(scope);
    return user ? this.q.list.all(user.uid).map(rowToTurn) : [];
  }

  async latest(scope: Scope, limit: number): Promise<Turn[]> {
    this.appends.flush();
    const user = this.user(scope);
    const n = Math.max(0, Math.floor(limit));
    return user && n > 0 ? this.q.latest.all(user.uid, n).map(rowToTurn).reverse() : [];
  }

  async remove(scope: Scope, turnIds: readonly string[]): Promise<void> {
    this.appends.flush();
    if (turnIds.length > 0) this.removeTx(scope, turnIds);
  }

  async pendingTokens(scope: Scope): Promise<number> {
    this.appends.flush();
    return this.user(scope)?.pending_tokens ?? 0;
  }

  async openSession(record: NewSession): Promise<OpenOutcome> {
    return this.opens.run(record);
  }

  async getSession(tenantId: string, sessionId: string): Promise<SessionRecord | null> {
    this.opens.flush();
    return this.sessions.get(tenantId, sessionId);
  }

  async endSession(tenantId: string, sessionId: string, endedAt: number, ifGeneration?: number): Promise<boolean> {
    this.opens.flush();
    return this.sessions.markEnded(tenantId, sessionId, endedAt, ifGeneration);
  }

  async deferEnd(tenantId: string, sessionId: string, generation: number, dueAt: number): Promise<boolean> {
    this.opens.flush();
    return this.sessions.deferEnd(tenantId, sessionId, generation, dueAt);
  }

  async renewLease(holder: string, until: number): Promise<void> {
    this.sessions.renewLease(holder, until);
  }

  async dueSessions(now: number, graceMs: number, limit: number): Promise<SessionRecord[]> {
    this.opens.flush();
    return this.sessions.dueSessions(now, graceMs, limit);
  }

  async seqOf(scope: Scope, turnId: string): Promise<number | null> {
    this.appends.flush();
    const user = this.user(scope);
    return (user && this.q.idOf.get(user.uid, turnId)?.seq) ?? null;
  }

  async forget(scope: Scope): Promise<void> {
    this.appends.flush();
    this.opens.flush();
    this.forgetTx(scope);
  }

  /** Commits an open group; the shared Database itself is closed by whoever opened it. */
  async close(): Promise<void> {
    this.appends.flush();
  }

  private user(scope: Scope): UserRow | undefined {
    return this.q.user.get(scope.tenantId, scope.agentId, scope.userId);
  }

  private appendIn(scope: Scope, sessionId: string, input: TurnToAppend): AppendOutcome {
    const uid = this.user(scope)?.uid ?? this.q.newUser.get(scope.tenantId, scope.agentId, scope.userId)!.uid;
    const seen = this.q.idOf.get(uid, input.turnId);
    if (seen) {
      const original = seen.removed !== null ? (JSON.parse(seen.removed) as Turn) : rowToTurn(this.q.turnAt.get(uid, seen.seq)!);
      return { turn: original, duplicate: true, pendingTokens: this.user(scope)!.pending_tokens };
    }
    const counters = this.q.bump.get(input.tokens, uid)!;
    const turn = toStoredTurn(counters.last_seq, sessionId, input);
    this.q.insertTurn.run(...turnParams(uid, turn));
    this.q.insertId.run(uid, turn.turnId, turn.seq);
    return { turn, duplicate: false, pendingTokens: counters.pending_tokens };
  }

  private removeIn(scope: Scope, turnIds: readonly string[]): void {
    const user = this.user(scope);
    if (!user) return;
    let freed = 0;
    for (const turnId of new Set(turnIds)) {
      const id = this.q.idOf.get(user.uid, turnId);
      if (!id || id.removed !== null) continue;
      const row = this.q.deleteTurn.get(user.uid, id.seq);
      if (!row) continue;
      // Keep the turn with its idempotency key so a late retry of the append still gets the original.
      this.q.markRemoved.run(JSON.stringify(rowToTurn(row)), user.uid, turnId);
      freed += row.tokens;
    }
    if (freed > 0) this.q.release.run(freed, user.uid);
  }

  private forgetIn(scope: Scope): void {
    this.sessions.forget(scope);
    const user = this.user(scope);
    if (!user) return;
    this.q.forgetTurns.run(user.uid);
    this.q.forgetIds.run(user.uid);
    this.q.forgetUser.run(user.uid);
  }
}
