import type { QdrantClient } from '@qdrant/js-client-rest';
import { MemgateError } from '../../core/errors.ts';
import { classifyQdrantError } from './errors.ts';
import { collectionConfig, collectionProblem, missingPayloadIndexes } from './queries.ts';

/**
 * Make sure the ACU collection exists with the right vector size and distance and has its
 * payload indexes. Safe to run from several processes at once: a create that loses the race
 * is accepted when the collection exists afterwards, and index creation is idempotent.
 * A collection of the wrong shape is refused (not recreated: it may hold someone's data).
 */
export async function ensureCollection(client: QdrantClient, name: string, dimensions: number): Promise<void> {
  const { exists } = await call('collection exists', () => client.collectionExists(name));
  if (!exists) {
    try {
      await client.createCollection(name, collectionConfig(dimensions));
    } catch (err) {
      const again = await call('collection exists', () => client.collectionExists(name));
      if (!again.exists) throw classifyQdrantError(err, `create collection ${name}`);
    }
  }
  const info = await call('get collection', () => client.getCollection(name));
  const problem = collectionProblem(info, dimensions);
  if (problem !== null) {
    throw new MemgateError('internal', `qdrant collection ${name} cannot hold memgate ACUs: ${problem}`, { retryable: false });
  }
  for (const index of missingPayloadIndexes(info)) {
    await call(`create payload index ${index.field_name}`, () => client.createPayloadIndex(name, { ...index, wait: true }));
  }
}

async function call<T>(op: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw classifyQdrantError(err, op);
  }
}
