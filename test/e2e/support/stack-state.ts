/**
 * Reads what the production stack stored for one user, straight from its
 * stores (the Redis turn buffer under the run's prefix, and the SQLite file the
 * gateway and workers share), so the e2e test checks the data, not the API.
 */
import type { Redis } from 'ioredis';
import type { HotDocument, Scope } from '../../../src/core/types.ts';
import { RedisTurnBuffer } from '../../../src/adapters/redis/index.ts';
import { openSqlite, SqliteDocumentStore, type Database } from '../../../src/adapters/sqlite/index.ts';

/** One stored ACU, as far as duplicate checks need it. */
export interface StoredAcu {
  id: string;
  contentHash: string;
  turnRefs: string[];
}

/** A user's data across the stores. */
export interface UserState {
  /** Turn ids in the cold archive, one per row (a duplicate row would repeat an id). */
  archived: string[];
  /** Turn ids still in the hot buffer, in seq order. */
  buffered: string[];
  doc: HotDocument | null;
  acus: StoredAcu[];
}

/** Opens the stores of one stack; `close()` releases the SQLite connection (Redis stays the caller's). */
export class StackState {
  private readonly db: Database;
  private readonly buffer: RedisTurnBuffer;
  private readonly documents: SqliteDocumentStore;
  private readonly coldIds;
  private readonly acuRows;

  constructor(redis: Redis, redisPrefix: string, sqlitePath: string) {
    this.db = openSqlite(sqlitePath);
    this.buffer = new RedisTurnBuffer(redis, redisPrefix);
    this.documents = new SqliteDocumentStore(this.db);
    this.coldIds = this.db.prepare<[string, string, string], { turn_id: string }>('SELECT turn_id FROM ca_turns WHERE tenant_id = ? AND agent_id = ? AND user_id = ? ORDER BY id');
    this.acuRows = this.db.prepare<[string, string, string], { id: string; content_hash: string; turn_refs: string }>(
      'SELECT id, content_hash, turn_refs FROM acu_items WHERE tenant_id = ? AND agent_id = ? AND user_id = ? ORDER BY rid',
    );
  }

  /** Buffered turn ids and the hot document only: cheap enough to poll. */
  async hot(scope: Scope): Promise<{ buffered: string[]; doc: HotDocument | null }> {
    const [turns, doc] = await Promise.all([this.buffer.list(scope), this.documents.getHot(scope)]);
    return { buffered: turns.map((t) => t.turnId), doc };
  }

  /** Everything the invariants look at. */
  async user(scope: Scope): Promise<UserState> {
    const { buffered, doc } = await this.hot(scope);
    const archived = this.coldIds.all(scope.tenantId, scope.agentId, scope.userId).map((r) => r.turn_id);
    const acus = this.acuRows.all(scope.tenantId, scope.agentId, scope.userId).map((r) => ({
      id: r.id,
      contentHash: r.content_hash,
      turnRefs: JSON.parse(r.turn_refs) as string[],
    }));
    return { archived, buffered, doc, acus };
  }

  close(): void {
    this.db.close();
  }
}
