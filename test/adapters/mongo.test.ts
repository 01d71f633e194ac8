import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMongoStores, MongoColdArchive, MongoDocumentStore, type MongoStores } from '../../src/adapters/mongo/index.ts';
import { COLLECTIONS, hotId } from '../../src/adapters/mongo/records.ts';
import { sharedClose } from '../../src/adapters/mongo/stores.ts';
import { coldArchiveContract } from '../contract/cold-archive.contract.ts';
import { documentStoreContract } from '../contract/document-store.contract.ts';
import { makeHotDoc, makeTurn, randomScope, rid } from '../support/fixtures.ts';
import { closedPort } from '../support/net.ts';
import { describeWithServer } from '../support/servers.ts';

describeWithServer('mongo', 'MongoDB adapters', (url) => {
  // Own database per file run, dropped afterwards: files and runs never share data.
  const dbName = `memgate_test_${rid().replace(/-/g, '')}`;
  let stores: MongoStores | undefined;
  const db = () => {
    if (!stores) throw new Error('MongoDB stores not created');
    return stores.db;
  };

  beforeAll(async () => {
    stores = await createMongoStores(url, dbName);
  });
  afterAll(async () => {
    await stores?.db.dropDatabase();
    await stores?.close();
  });

  // A store per test over the shared client; its close() releases nothing it does not own.
  documentStoreContract('MongoDocumentStore', async () => new MongoDocumentStore(db()));
  coldArchiveContract('MongoColdArchive', async () => new MongoColdArchive(db()));

  describe('MongoDB-only behaviour', () => {
    it('creates the scope and text indexes at start-up', async () => {
      const hot = (await db().collection(COLLECTIONS.hot).indexes()).map((ix) => ix.name);
      const cold = (await db().collection(COLLECTIONS.cold).indexes()).map((ix) => ix.name);
      expect(hot).toContain('scope');
      expect(cold).toEqual(expect.arrayContaining(['scope_ts', 'scope_text']));
    });

    it('stores absent optional fields as absent, not null, and the hot document under its deterministic _id', async () => {
      const scope = randomScope();
      const store = new MongoDocumentStore(db());
      const archive = new MongoColdArchive(db());
      const doc = makeHotDoc(scope, 1);
      await store.commitHot(doc, 0);
      await archive.archive(scope, [makeTurn(1, { speaker: undefined, interrupted: undefined })]);
      const rawHot = await db().collection(COLLECTIONS.hot).findOne({ tenantId: scope.tenantId });
      expect(rawHot?._id).toBe(hotId(scope));
      const rawCold = await db().collection(COLLECTIONS.cold).findOne({ tenantId: scope.tenantId });
      expect(rawCold).not.toBeNull();
      expect(Object.keys(rawCold ?? {})).not.toContain('speaker');
      expect(Object.keys(rawCold ?? {})).not.toContain('interrupted');
    });

    it('opens a second set of stores over the same database without index conflicts', async () => {
      const again = await createMongoStores(url, dbName);
      await again.documents.close();
      expect(await again.cold.count(randomScope())).toBe(0);
      await again.cold.close();
      await again.close();
    });
  });
});

describe('MongoDB adapters without a server', () => {
  it('fails start-up with a retryable `unavailable` MemgateError when nothing listens', async () => {
    const port = await closedPort();
    await expect(createMongoStores(`mongodb://127.0.0.1:${port}/?directConnection=true`, 'memgate_none', { serverSelectionTimeoutMS: 300 })).rejects.toMatchObject({
      name: 'MemgateError',
      code: 'unavailable',
      retryable: true,
    });
  });

  it('closes a shared client once, when its last holder releases it or on closeAll', async () => {
    let closed = 0;
    const shared = sharedClose(async () => void closed++, 2);
    await shared.release();
    expect(closed).toBe(0);
    await shared.release();
    expect(closed).toBe(1);
    await shared.closeAll();
    expect(closed).toBe(1);
    const early = sharedClose(async () => void closed++, 2);
    await early.closeAll();
    await early.release();
    await early.release();
    expect(closed).toBe(2);
  });
});
