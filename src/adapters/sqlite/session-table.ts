import type { Scope } from '../../core/types.ts';
import type { OpenOutcome, SessionRecord } from '../../ports/turn-buffer.ts';
import type { Database } from './database.ts';
import { migrate } from './migrations.ts';

interface SessionRow {
  session_id: string;
  tenant_id: string;
  agent_id: string;
  user_id: string;
  started_at: number;
  ended_at: number | null;
}

/** The `tb_sessions` table: the session half of SqliteTurnBuffer, kept apart to keep files small. */
export class SqliteSessionTable {
  private readonly insert;
  private readonly select;
  private readonly end;
  private readonly deleteUser;

  constructor(db: Database) {
    migrate(db);
    // First open wins: a reconnect re-sending `start` must not move startedAt or revive an ended call.
    this.insert = db.prepare(
      `INSERT INTO tb_sessions (tenant_id, session_id, agent_id, user_id, started_at, ended_at)
       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, session_id) DO NOTHING`,
    );
    this.select = db.prepare<[string, string], SessionRow>('SELECT * FROM tb_sessions WHERE tenant_id = ? AND session_id = ?');
    this.end = db.prepare('UPDATE tb_sessions SET ended_at = ? WHERE tenant_id = ? AND session_id = ?');
    this.deleteUser = db.prepare('DELETE FROM tb_sessions WHERE tenant_id = ? AND agent_id = ? AND user_id = ?');
  }

  /** Record a session start (idempotent for its owner); an id held by another agent or user is a conflict. Runs inside the caller's transaction. */
  open(record: SessionRecord): OpenOutcome {
    const { scope } = record;
    const inserted = this.insert.run(scope.tenantId, record.sessionId, scope.agentId, scope.userId, record.startedAt, record.endedAt).changes > 0;
    if (inserted) return { status: 'opened', session: record };
    const stored = this.get(scope.tenantId, record.sessionId)!;
    const mine = stored.scope.agentId === scope.agentId && stored.scope.userId === scope.userId;
    return { status: mine ? 'existing' : 'conflict', session: stored };
  }

  /** The session, or null when the tenant has no session of that id. */
  get(tenantId: string, sessionId: string): SessionRecord | null {
    const row = this.select.get(tenantId, sessionId);
    if (!row) return null;
    return {
      sessionId: row.session_id,
      scope: { tenantId: row.tenant_id, agentId: row.agent_id, userId: row.user_id },
      startedAt: row.started_at,
      endedAt: row.ended_at,
    };
  }

  /** Mark ended; unknown sessions are ignored (an `end` may race a forget). */
  markEnded(tenantId: string, sessionId: string, endedAt: number): void {
    this.end.run(endedAt, tenantId, sessionId);
  }

  /** Delete every session of the user (call inside the caller's forget transaction). */
  forget(scope: Scope): void {
    this.deleteUser.run(scope.tenantId, scope.agentId, scope.userId);
  }
}
