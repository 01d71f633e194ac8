import { MemgateError } from '../../core/errors.ts';
import type { ExtractionSchema } from '../../core/extraction-schema.ts';
import type { HotDocument, Scope } from '../../core/types.ts';
import type { DocumentStore } from '../../ports/document-store.ts';
import { packPlain, unpackPlain } from './codec.ts';
import type { Database } from './database.ts';
import { migrate } from './migrations.ts';

/**
 * Embedded hot documents (one MessagePack row per agent+user, with its version
 * in a column for the compare-and-set) and agent schemas (JSON).
 */
export class SqliteDocumentStore implements DocumentStore {
  private readonly q;

  /** `db` is shared and stays open after `close()`: its opener closes it. */
  constructor(db: Database) {
    migrate(db);
    this.q = {
      hot: db.prepare<[string, string, string], { body: Buffer }>('SELECT body FROM ds_hot WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
      // Each commit is one statement, so the version check and the write are atomic without a transaction.
      create: db.prepare(
        `INSERT INTO ds_hot (tenant_id, agent_id, user_id, version, body) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (tenant_id, agent_id, user_id) DO NOTHING`,
      ),
      update: db.prepare('UPDATE ds_hot SET version = ?, body = ? WHERE tenant_id = ? AND agent_id = ? AND user_id = ? AND version = ?'),
      forget: db.prepare('DELETE FROM ds_hot WHERE tenant_id = ? AND agent_id = ? AND user_id = ?'),
      schema: db.prepare<[string, string], { body: string }>('SELECT body FROM ds_schemas WHERE tenant_id = ? AND agent_id = ?'),
      putSchema: db.prepare(
        `INSERT INTO ds_schemas (tenant_id, agent_id, body) VALUES (?, ?, ?)
         ON CONFLICT (tenant_id, agent_id) DO UPDATE SET body = excluded.body`,
      ),
    };
  }

  async getHot(scope: Scope): Promise<HotDocument | null> {
    const row = this.q.hot.get(scope.tenantId, scope.agentId, scope.userId);
    return row ? unpackPlain<HotDocument>(row.body) : null;
  }

  async commitHot(doc: HotDocument, expectedVersion: number): Promise<boolean> {
    if (doc.version !== expectedVersion + 1) {
      throw new MemgateError('internal', `hot document version ${doc.version} must be expectedVersion + 1 (${expectedVersion + 1})`);
    }
    const { tenantId, agentId, userId } = doc.scope;
    const body = packPlain(doc);
    const result = expectedVersion === 0 ? this.q.create.run(tenantId, agentId, userId, doc.version, body) : this.q.update.run(doc.version, body, tenantId, agentId, userId, expectedVersion);
    return result.changes === 1;
  }

  async getSchema(tenantId: string, agentId: string): Promise<ExtractionSchema | null> {
    const row = this.q.schema.get(tenantId, agentId);
    return row ? (JSON.parse(row.body) as ExtractionSchema) : null;
  }

  async putSchema(tenantId: string, agentId: string, schema: ExtractionSchema): Promise<void> {
    this.q.putSchema.run(tenantId, agentId, JSON.stringify(schema));
  }

  /** Drops the user's hot document; schemas belong to the agent and stay. */
  async forget(scope: Scope): Promise<void> {
    this.q.forget.run(scope.tenantId, scope.agentId, scope.userId);
  }

  /** Nothing to release: the shared Database is closed by whoever opened it. */
  async close(): Promise<void> {}
}
