import type { Scope } from '../../core/types.ts';
import type { ContextCache } from '../../ports/context-cache.ts';
import type { Database } from './database.ts';
import { migrate } from './migrations.ts';

/** The embedded preloaded-context cache: one blob per agent+user, read by primary key. */
export class SqliteContextCache implements ContextCache {
  private readonly select;
  private readonly upsert;
  private readonly remove;

  /** `db` is shared and stays open after `close()`: its opener closes it. */
  constructor(db: Database) {
    migrate(db);
    this.select = db.prepare<[string, string, string], { body: Buffer }>('SELECT body FROM cc_contexts WHERE tenant_id = ? AND agent_id = ? AND user_id = ?');
    this.upsert = db.prepare(
      `INSERT INTO cc_contexts (tenant_id, agent_id, user_id, body) VALUES (?, ?, ?, ?)
       ON CONFLICT (tenant_id, agent_id, user_id) DO UPDATE SET body = excluded.body`,
    );
    this.remove = db.prepare('DELETE FROM cc_contexts WHERE tenant_id = ? AND agent_id = ? AND user_id = ?');
  }

  async get(scope: Scope): Promise<Uint8Array | null> {
    return this.select.get(scope.tenantId, scope.agentId, scope.userId)?.body ?? null;
  }

  async set(scope: Scope, bytes: Uint8Array): Promise<void> {
    this.upsert.run(scope.tenantId, scope.agentId, scope.userId, bytes);
  }

  async delete(scope: Scope): Promise<void> {
    this.remove.run(scope.tenantId, scope.agentId, scope.userId);
  }

  /** Nothing to release: the shared Database is closed by whoever opened it. */
  async close(): Promise<void> {}
}
