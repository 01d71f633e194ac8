import { QdrantClient } from '@qdrant/js-client-rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createQdrantAcuIndex, QdrantAcuIndex } from '../../src/adapters/qdrant/index.ts';
import { acuIndexContract } from '../contract/acu-index.contract.ts';
import { CONTRACT_DIMENSIONS, makeAcu, randomScope, rid, unitVector } from '../support/fixtures.ts';
import { closedPort } from '../support/net.ts';
import { describeWithServer } from '../support/servers.ts';

describeWithServer('qdrant', 'Qdrant adapter', (url) => {
  // Own collection per file run, deleted afterwards: files and runs never share points.
  const collection = `memgate_test_${rid().replace(/-/g, '')}`;
  const apiKey = process.env['MEMGATE_TEST_QDRANT_API_KEY'] || undefined;
  const client = new QdrantClient({ url, ...(apiKey ? { apiKey } : {}), checkCompatibility: false });

  beforeAll(async () => {
    await createQdrantAcuIndex({ url, apiKey, collection, dimensions: CONTRACT_DIMENSIONS });
  });
  afterAll(async () => {
    await client.deleteCollection(collection);
  });

  acuIndexContract('QdrantAcuIndex', async () => new QdrantAcuIndex(client, collection, CONTRACT_DIMENSIONS));

  describe('Qdrant-only behaviour', () => {
    it('ensures an existing collection again without error, with its payload indexes', async () => {
      await createQdrantAcuIndex({ url, apiKey, collection, dimensions: CONTRACT_DIMENSIONS });
      const info = await client.getCollection(collection);
      expect(Object.keys(info.payload_schema)).toEqual(expect.arrayContaining(['tenantId', 'agentId', 'userId', 'createdAtMs']));
    });

    it('refuses an existing collection whose vector size differs from the embedder', async () => {
      await expect(createQdrantAcuIndex({ url, apiKey, collection, dimensions: 8 })).rejects.toMatchObject({ code: 'internal', retryable: false });
    });

    it('keeps the original ACU id in the payload and a UUID as the point id', async () => {
      const scope = randomScope();
      const index = new QdrantAcuIndex(client, collection, CONTRACT_DIMENSIONS);
      const acu = makeAcu(scope, 'Rajiv Kumar prefers calls in the evening', unitVector({ 0: 1 }), { id: 'acu:not-a-uuid' });
      await index.upsert(scope, [acu]);
      const [hit] = await index.search(scope, unitVector({ 0: 1 }), 1);
      expect(hit?.acu.id).toBe('acu:not-a-uuid');
      await index.forget(scope);
    });
  });
});

describe('Qdrant adapter without a server', () => {
  it('fails start-up with a retryable `unavailable` MemgateError when nothing listens', async () => {
    const port = await closedPort();
    await expect(createQdrantAcuIndex({ url: `http://127.0.0.1:${port}`, collection: 'memgate_none', dimensions: 8, timeoutMs: 2000 })).rejects.toMatchObject({
      name: 'MemgateError',
      code: 'unavailable',
      retryable: true,
    });
  });
});
