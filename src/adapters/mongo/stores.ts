import { MongoClient, type Db, type MongoClientOptions } from 'mongodb';
import { classifyMongoError } from './errors.ts';
import { MongoColdArchive } from './cold-archive.ts';
import { MongoDocumentStore } from './document-store.ts';
import { ensureIndexes } from './indexes.ts';

/** Both Mongo-backed ports over one client, and the close that ends that client. */
export interface MongoStores {
  documents: MongoDocumentStore;
  cold: MongoColdArchive;
  /** The database both stores use (admin scripts and tests: extra stores, `dropDatabase`). */
  db: Db;
  /** Close the shared client (idempotent; closing both stores does the same). */
  close(): Promise<void>;
}

/**
 * Connect, create the indexes the adapters rely on, and return both stores. `undefined` fields
 * are dropped on write (`ignoreUndefined`), never stored as null, so optional fields round-trip.
 * Fails fast (10 s server selection) so a wrong URL stops start-up instead of every first request.
 */
export async function createMongoStores(url: string, dbName: string, options: MongoClientOptions = {}): Promise<MongoStores> {
  const client = new MongoClient(url, { appName: 'memgate', ignoreUndefined: true, serverSelectionTimeoutMS: 10_000, ...options });
  try {
    await client.connect();
    const db = client.db(dbName);
    await ensureIndexes(db);
    const { release, closeAll } = sharedClose(() => client.close(), 2);
    return { documents: new MongoDocumentStore(db, release), cold: new MongoColdArchive(db, release), db, close: closeAll };
  } catch (err) {
    await client.close().catch(() => undefined);
    throw classifyMongoError(err, 'connect');
  }
}

/**
 * Reference-counted close of a shared resource: each of `holders` calls `release` once and the
 * last one closes it; `closeAll` closes it at once. The close runs at most once either way.
 */
export function sharedClose(close: () => Promise<void>, holders: number): { release: () => Promise<void>; closeAll: () => Promise<void> } {
  let open = holders;
  let closing: Promise<void> | null = null;
  const closeAll = (): Promise<void> => (closing ??= close());
  return {
    release: async () => {
      if (--open === 0) await closeAll();
    },
    closeAll,
  };
}
