import { systemClock, type Clock } from './core/clock.ts';
import { createLogger, type Logger } from './core/logger.ts';
import type { Config } from './config/schema.ts';
import type { Ports } from './ports/index.ts';
import type { Consumer } from './ports/job-bus.ts';
import { MemoryService } from './service/memory-service.ts';
import { startExtractionWorker } from './workers/extraction-worker.ts';

/** A wired memgate: the service, its ports, and the lifecycle of both. */
export interface Runtime {
  config: Config;
  service: MemoryService;
  ports: Ports;
  logger: Logger;
  clock: Clock;
  /** Start consuming extraction jobs in this process (embedded default, `memgate worker`). */
  startWorkers(): void;
  /** Stop workers (waiting for in-flight jobs), then close every port. */
  close(): Promise<void>;
}

/** Options for tests and embedding applications. */
export interface RuntimeOptions {
  logger?: Logger;
  clock?: Clock;
}

/**
 * The composition root's helper and the only module that imports adapters.
 * Production SDKs are imported lazily, so the embedded default never loads them.
 */
export async function createRuntime(config: Config, opts: RuntimeOptions = {}): Promise<Runtime> {
  const logger = opts.logger ?? createLogger(config.log.level, { service: 'memgate' });
  const clock = opts.clock ?? systemClock;
  const closers: Array<() => Promise<void>> = [];
  const ports = await buildPorts(config, clock, logger, closers);
  const service = new MemoryService(ports, config, clock, logger.child({ component: 'service' }));
  const consumers: Consumer[] = [];
  return {
    config,
    service,
    ports,
    logger,
    clock,
    startWorkers() {
      consumers.push(startExtractionWorker(service.extraction, config.worker));
    },
    async close() {
      await Promise.all(consumers.splice(0).map((c) => c.stop()));
      // Bus first so no new job starts, then the stores; each closed once even when shared.
      for (const close of closers.reverse()) await close().catch((err: unknown) => logger.warn('close failed', { err }));
    },
  };
}

async function buildPorts(config: Config, clock: Clock, logger: Logger, closers: Array<() => Promise<void>>): Promise<Ports> {
  const a = config.adapters;
  const needsSqlite = a.buffer === 'sqlite' || a.cache === 'sqlite' || a.documents === 'sqlite' || a.cold === 'sqlite' || a.acus === 'sqlite';
  const sqlite = needsSqlite ? await import('./adapters/sqlite/index.ts') : null;
  const db = sqlite ? sqlite.openSqlite(config.sqlite.path) : null;
  if (db) closers.push(async () => void db.close());

  const redisNeeded = a.buffer === 'redis' || a.cache === 'redis' || a.lock === 'redis';
  const redisMod = redisNeeded ? await import('./adapters/redis/index.ts') : null;
  const redis = redisMod ? redisMod.createRedis(config.redis.url) : null;
  if (redis) closers.push(async () => void (await redis.quit().catch(() => redis.disconnect())));

  const natsNeeded = a.bus === 'nats' || a.events === 'nats';
  const natsMod = natsNeeded ? await import('./adapters/nats/index.ts') : null;
  const nc = natsMod ? await natsMod.connectNats(config.nats.servers) : null;
  if (nc) closers.push(async () => void (await nc.drain().catch(() => nc.close())));

  const mongoNeeded = a.documents === 'mongo' || a.cold === 'mongo';
  const mongo = mongoNeeded ? await (await import('./adapters/mongo/index.ts')).createMongoStores(config.mongo.url, config.mongo.db) : null;
  if (mongo) closers.push(() => mongo.close());

  const memory = await import('./adapters/memory/index.ts');
  const prefix = config.redis.keyPrefix;

  const buffer = a.buffer === 'redis' ? new redisMod!.RedisTurnBuffer(redis!, prefix) : new sqlite!.SqliteTurnBuffer(db!);
  const cache = a.cache === 'redis' ? new redisMod!.RedisContextCache(redis!, prefix) : new sqlite!.SqliteContextCache(db!);
  const documents = a.documents === 'mongo' ? mongo!.documents : new sqlite!.SqliteDocumentStore(db!);
  const cold = a.cold === 'mongo' ? mongo!.cold : new sqlite!.SqliteColdArchive(db!);
  const lock = a.lock === 'redis' ? new redisMod!.RedisUserLock(redis!, prefix) : new memory.InProcessUserLock(clock);
  const events = a.events === 'nats' ? new natsMod!.NatsEventBus(nc!, config.nats.subjectPrefix) : new memory.InProcessEventBus();
  const bus =
    a.bus === 'nats'
      ? await natsMod!.JetStreamJobBus.create(nc!, { stream: config.nats.stream, subjectPrefix: config.nats.subjectPrefix, ackWaitMs: config.nats.ackWaitMs, maxDeliver: config.worker.maxDeliver, logger })
      : new memory.InProcessJobBus({ logger });
  closers.push(() => bus.close());

  const embedder = a.embedder === 'openai' ? new (await import('./adapters/openai/index.ts')).OpenAiEmbedder(config.embeddings) : new (await import('./adapters/offline/index.ts')).OfflineEmbedder({ dimensions: config.embeddings.dimensions });
  const extractor = a.extractor === 'openai' ? new (await import('./adapters/openai/index.ts')).OpenAiExtractor(config.llm) : new (await import('./adapters/offline/index.ts')).OfflineExtractor();
  const acus =
    a.acus === 'qdrant'
      ? await (await import('./adapters/qdrant/index.ts')).createQdrantAcuIndex({ ...config.qdrant, dimensions: embedder.dimensions })
      : new sqlite!.SqliteAcuIndex(db!);
  if (embedder.dimensions !== config.embeddings.dimensions) logger.warn('embedder dimensions differ from config', { embedder: embedder.dimensions, config: config.embeddings.dimensions });
  return { buffer, cache, documents, cold, acus, bus, lock, events, extractor, embedder };
}
