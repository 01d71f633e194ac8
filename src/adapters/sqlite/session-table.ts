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
}

/** The `tb_sessions` table: the session half of SqliteTurnBuffer, kept apart to keep files small. */
export class SqliteSessionTable {
  private readonly insert;
  private readonly select;
  private readonly restart;
  private readonly end;
  private readonly endIf;
  private readonly deleteUser;

  constructor(db: Database) {
    migrate(db);
    // The first open fixes the owner and startedAt; a later one by the owner is a reconnect (restart below).
    this.insert = db.prepare(
      `INSERT INTO tb_sessions (tenant_id, session_id, agent_id, user_id, started_at, ended_at, generation)
       VALUES (?, ?, ?, ?, ?, ?, 1) ON CONFLICT (tenant_id, session_id) DO NOTHING`,
    );
    this.select = db.prepare<[string, string], SessionRow>('SELECT * FROM tb_sessions WHERE tenant_id = ? AND session_id = ?');
    this.restart = db.prepare<[string, string], SessionRow>('UPDATE tb_sessions SET generation = generation + 1, ended_at = NULL WHERE tenant_id = ? AND session_id = ? RETURNING *');
    this.end = db.prepare('UPDATE tb_sessions SET ended_at = ? WHERE tenant_id = ? AND session_id = ?');
    this.endIf = db.prepare('UPDATE tb_sessions SET ended_at = ? WHERE tenant_id = ? AND session_id = ? AND generation = ? AND ended_at IS NULL');
    this.deleteUser = db.prepare('DELETE FROM tb_sessions WHERE tenant_id = ? AND agent_id = ? AND user_id = ?');
  }

  /** Record a session start: a new id, a reconnect of its owner (next generation, live again), or a conflict. Runs inside the caller's transaction. */
  open(record: NewSession): OpenOutcome {
    const { scope } = record;
    const inserted = this.insert.run(scope.tenantId, record.sessionId, scope.agentId, scope.userId, record.startedAt, record.endedAt).changes > 0;
    if (inserted) return { status: 'opened', session: { ...record, generation: 1 } };
    const stored = this.get(scope.tenantId, record.sessionId)!;
    const mine = stored.scope.agentId === scope.agentId && stored.scope.userId === scope.userId;
    if (!mine) return { status: 'conflict', session: stored };
    const restarted = toRecord(this.restart.get(scope.tenantId, record.sessionId)!);
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

  /** Delete every session of the user (call inside the caller's forget transaction). */
  forget(scope: Scope): void {
    this.deleteUser.run(scope.tenantId, scope.agentId, scope.userId);
  }
}

function toRecord(row: SessionRow): SessionRecord {
  return {
    sessionId: row.session_id,
    scope: { tenantId: row.tenant_id, agentId: row.agent_id, userId: row.user_id },
    startedAt: row.started_at,
    endedAt: row.ended_at,
    generation: row.generation,
  };
}
