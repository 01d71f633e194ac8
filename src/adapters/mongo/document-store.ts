import type { Collection, Db } from 'mongodb';
import { MemgateError } from '../../core/errors.ts';
import type { ExtractionSchema } from '../../core/extraction-schema.ts';
import type { HotDocument, Scope } from '../../core/types.ts';
import type { DocumentStore } from '../../ports/document-store.ts';
import { classifyMongoError, isDuplicateKey } from './errors.ts';
import { MongoStoreBase } from './store-base.ts';
import { casFilter, casUpdate, COLLECTIONS, fromHotRecord, hotId, schemaId, scopeFilter, toHotRecord, toSchemaRecord, type HotRecord, type SchemaRecord } from './records.ts';

/**
 * Hot documents and agent schemas on MongoDB. A commit is a single-document compare-and-set:
 * version 0 is an insert on the deterministic `_id` (a racing insert loses with a duplicate
 * key), later versions an update conditioned on the version read. So two workers can never
 * both commit on the same base, and the append-only supersession history cannot fork.
 */
export class MongoDocumentStore extends MongoStoreBase implements DocumentStore {
  private readonly hot: Collection<HotRecord>;
  private readonly schemas: Collection<SchemaRecord>;

  /** `release` is called once on the first `close()` (the factory shares one client between stores). */
  constructor(db: Db, release: () => Promise<void> = async () => {}) {
    super(release);
    this.hot = db.collection<HotRecord>(COLLECTIONS.hot);
    this.schemas = db.collection<SchemaRecord>(COLLECTIONS.schemas);
  }

  /** One `_id` lookup. */
  async getHot(scope: Scope): Promise<HotDocument | null> {
    const rec = await this.call('getHot', () => this.hot.findOne({ _id: hotId(scope) }));
    return rec === null ? null : fromHotRecord(rec);
  }

  async commitHot(doc: HotDocument, expectedVersion: number): Promise<boolean> {
    if (doc.version !== expectedVersion + 1) {
      throw new MemgateError('internal', `hot document version ${doc.version} must be expectedVersion + 1 (${expectedVersion + 1})`);
    }
    const record = toHotRecord(doc);
    if (expectedVersion === 0) {
      try {
        await this.hot.insertOne(record);
        return true;
      } catch (err) {
        if (isDuplicateKey(err)) return false;
        throw classifyMongoError(err, 'commitHot insert');
      }
    }
    const res = await this.call('commitHot update', () => this.hot.updateOne(casFilter(doc.scope, expectedVersion), casUpdate(record)));
    return res.matchedCount === 1;
  }

  async getSchema(tenantId: string, agentId: string): Promise<ExtractionSchema | null> {
    const rec = await this.call('getSchema', () => this.schemas.findOne({ _id: schemaId(tenantId, agentId) }));
    return rec === null ? null : rec.schema;
  }

  async putSchema(tenantId: string, agentId: string, schema: ExtractionSchema): Promise<void> {
    const { _id, ...replacement } = toSchemaRecord(tenantId, agentId, schema);
    await this.call('putSchema', () => this.schemas.replaceOne({ _id }, replacement, { upsert: true }));
  }

  /** Drops the user's hot document; schemas belong to the agent and stay. */
  async forget(scope: Scope): Promise<void> {
    await this.call('forget', () => this.hot.deleteMany(scopeFilter(scope)));
  }
}
