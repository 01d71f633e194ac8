/** The MongoDB hot-document store and cold archive (production). Only `src/app/wiring.ts` imports this, lazily. */
export { createMongoStores, type MongoStores } from './stores.ts';
export { MongoDocumentStore } from './document-store.ts';
export { MongoColdArchive } from './cold-archive.ts';
export { ensureIndexes } from './indexes.ts';
