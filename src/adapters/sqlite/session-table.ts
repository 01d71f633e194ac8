import type { Scope } from '../../core/types.ts';
import type { NewSession, OpenOutcome, SessionRecord } from '../../ports/turn-buffer.ts';
import type { Database } from './database.ts';
import { migrate } from './migrations.ts';

interface SessionRow {
  session_id: string;
  tenant_id: string;
  agent_id: string;
  user_id: string;
  started_at: number;
  ended_at: number | null;
  generation: number;
  holder: string | null;
  due_at: number | null;
}

/** The `tb_sessions` table: the session half of SqliteTurnBuffer, kept apart to keep files small. */
export class SqliteSessionTable {
  private readonly insert;
  private readonly select;
  private readonly restart;
  private readonly end;
  private readonly endIf;
  private readonly deleteUser;
  private readonly defer;
  private readonly lease;
  private readonly due;
  private readonly dropLeases;
  private readonly lapsed;

  constructor(db: Database) {
    migrate(db);
    // The first open fixes the owner and startedAt; a later one by the owner is a reconnect (restart below).
    this.insert = db.prepare(
      `INSERT INTO tb_sessions (tenant_id, session_id, agent_id, user_id, started_at, ended_at, generation, holder)
       VALUES (?, ?, ?, ?, ?, ?, 1, ?) ON CONFLICT (tenant_id, session_id) DO NOTHING`,
    );
    this.select = db.prepare<[string, string], SessionRow>('SELECT * FROM tb_sessions WHERE tenant_id = ? AND session_id = ?');
    // A new generation is held by whoever started it (nobody, over HTTP), and no earlier deferred end applies to it.
    this.restart = db.prepare<[string | null, string, string], SessionRow>(
      'UPDATE tb_sessions SET generation = generation + 1, ended_at = NULL, holder = ?, due_at = NULL WHERE tenant_id = ? AND session_id = ? RETURNING *',
    );
    this.end = db.prepare('UPDATE tb_sessions SET ended_at = ?, holder = NULL, due_at = NULL WHERE tenant_id = ? AND session_id = ?');
    this.endIf = db.prepare('UPDATE tb_sessions SET ended_at = ?, holder = NULL, due_at = NULL WHERE tenant_id = ? AND session_id = ? AND generation = ? AND ended_at IS NULL');
    this.deleteUser = db.prepare('DELETE FROM tb_sessions WHERE tenant_id = ? AND agent_id = ? AND user_id = ?');
    this.defer = db.prepare('UPDATE tb_sessions SET due_at = ?, holder = NULL WHERE tenant_id = ? AND session_id = ? AND generation = ? AND ended_at IS NULL');
    this.lease = db.prepare('INSERT INTO tb_leases (holder, until) VALUES (?, ?) ON CONFLICT (holder) DO UPDATE SET until = MAX(until, excluded.until)');
    // Both halves read a partial index (tb_sessions_due, tb_sessions_held); a holder with no lease row is gone too.
    this.due = db.prepare<[number, number, number], SessionRow>(
      `SELECT * FROM tb_sessions WHERE due_at <= ? AND ended_at IS NULL
       UNION ALL
       SELECT s.* FROM tb_sessions s LEFT JOIN tb_leases l ON l.holder = s.holder
       WHERE s.holder IS NOT NULL AND s.ended_at IS NULL AND s.due_at IS NULL AND (l.until IS NULL OR l.until <= ?)
       LIMIT ?`,
    );
    this.lapsed = db.prepare<[number], { one: number }>('SELECT 1 AS one FROM tb_leases WHERE until <= ? LIMIT 1');
    this.dropLeases = db.prepare('DELETE FROM tb_leases WHERE until <= ? AND NOT EXISTS (SELECT 1 FROM tb_sessions s WHERE s.holder = tb_leases.holder AND s.ended_at IS NULL)');
  }

  /** Record a session start: a new id, a reconnect of its owner (next generation, live again), or a conflict. Runs inside the caller's transaction. */
  open(record: NewSession): OpenOutcome {
    const { scope } = record;
    const holder = record.endedAt === null ? (record.holder ?? null) : null;
    const inserted = this.insert.run(scope.tenantId, record.sessionId, scope.agentId, scope.userId, record.startedAt, record.endedAt, holder).changes > 0;
    if (inserted) return { status: 'opened', session: withHold({ sessionId: record.sessionId, scope, startedAt: record.startedAt, endedAt: record.endedAt, generation: 1 }, holder, null) };
    const stored = this.get(scope.tenantId, record.sessionId)!;
    const mine = stored.scope.agentId === scope.agentId && stored.scope.userId === scope.userId;
    if (!mine) return { status: 'conflict', session: stored };
    const restarted = toRecord(this.restart.get(holder, scope.tenantId, record.sessionId)!);
    return { status: stored.endedAt === null ? 'existing' : 'reopened', session: restarted };
  }

  /** The session, or null when the tenant has no session of that id. */
  get(tenantId: string, sessionId: string): SessionRecord | null {
    const row = this.select.get(tenantId, sessionId);
    return row ? toRecord(row) : null;
  }

  /** Mark ended (with `ifGeneration`: only while live at that generation); unknown sessions are ignored (an `end` may race a forget). */
  markEnded(tenantId: string, sessionId: string, endedAt: number, ifGeneration?: number): boolean {
    const run = ifGeneration === undefined ? this.end.run(endedAt, tenantId, sessionId) : this.endIf.run(endedAt, tenantId, sessionId, ifGeneration);
    return run.changes > 0;
  }

  /** Record a deferred end of a live session at `generation` (see TurnBuffer.deferEnd). */
  deferEnd(tenantId: string, sessionId: string, generation: number, dueAt: number): boolean {
    return this.defer.run(dueAt, tenantId, sessionId, generation).changes > 0;
  }

  /** A gateway's heartbeat (a lease never moves back: a late write of an older one changes nothing). */
  renewLease(holder: string, until: number): void {
    this.lease.run(holder, until);
  }

  /** Live sessions due to end (see TurnBuffer.dueSessions); forgets the leases of gone gateways that hold nothing. */
  dueSessions(now: number, graceMs: number, limit: number): SessionRecord[] {
    // Read first: the delete takes the write lock, which a sweep every second should not do for nothing.
    if (this.lapsed.get(now - graceMs)) this.dropLeases.run(now - graceMs);
    return this.due.all(now, now - graceMs, Math.max(0, Math.floor(limit))).map(toRecord);
  }

  /** Delete every session of the user (call inside the caller's forget transaction). */
  forget(scope: Scope): void {
    this.deleteUser.run(scope.tenantId, scope.agentId, scope.userId);
  }
}

function toRecord(row: SessionRow): SessionRecord {
  const record: SessionRecord = {
    sessionId: row.session_id,
    scope: { tenantId: row.tenant_id, agentId: row.agent_id, userId: row.user_id },
    startedAt: row.started_at,
    endedAt: row.ended_at,
    generation: row.generation,
  };
  return withHold(record, row.holder, row.due_at);
}

/** `holder` and `dueAt` are present only when set. */
function withHold(record: SessionRecord, holder: string | null, dueAt: number | null): SessionRecord {
  if (holder !== null) record.holder = holder;
  if (dueAt !== null) record.dueAt = dueAt;
  return record;
}
