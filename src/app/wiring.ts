import { probeServers, reachability } from './probe-servers.ts';
import { llmProbes } from './llm-probe.ts';
import { startDeadLetterSweeper } from '../workers/dead-letter-sweeper.ts';
import { systemClock, type Clock } from '../core/clock.ts';
import { createLogger, type Logger } from '../core/logger.ts';
import { embedderDimensions, type Config } from '../config/config-schema.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { Ports } from '../ports/index.ts';
import type { Consumer } from '../ports/job-bus.ts';
import { MemoryService } from '../service/memory-service.ts';
import { startExtractionWorker } from '../workers/extraction-worker.ts';
import { startThreadLane, type ThreadLane, type ThreadLaneOptions, type ThreadLaneStats } from '../workers/thread-lane.ts';
import type { UseLiteModel } from '../adapters/use-lite/index.ts';
import { encoderView } from '../text/encoder-view.ts';

/** A wired memgate: the service, its ports, and the lifecycle of both. */
export interface Runtime {
  config: Config;
  service: MemoryService;
  ports: Ports;
  logger: Logger;
  clock: Clock;
  /**
   * Start consuming extraction jobs in this process (embedded default, `memgate worker`).
   * On the embedded bus with a SQLite file the extraction itself runs on a worker
   * thread (see `usesThreadLane`), so it never stalls the gateway's event loop.
   */
  startWorkers(): void;
  /** Resolves once started workers can take jobs without a start-up wait (the extraction thread is up). */
  workersReady(): Promise<void>;
  /** Counters of the extraction thread, or null while extraction runs on this thread (tests, diagnostics). */
  extractionThread(): ThreadLaneStats | null;
  /** Probe the servers the configuration uses (none on the embedded default), the LLM and embeddings endpoints included. */
  reachability(): ReturnType<typeof reachability>;
  /** Stop workers (waiting for in-flight jobs), then close every port. */
  close(): Promise<void>;
}

/** Options for tests and embedding applications. */
export interface RuntimeOptions {
  logger?: Logger;
  clock?: Clock;
}

/**
 * Whether `startWorkers` runs extraction on a worker thread: only with the
 * embedded job bus (a NATS deployment scales out with `memgate worker` processes
 * instead) on a SQLite file (a second connection cannot share `:memory:`).
 */
export function usesThreadLane(config: Config): boolean {
  const path = config.sqlite.path;
  return config.adapters.bus === 'memory' && path !== ':memory:' && path !== '';
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
  const encode = usesThreadLane(config) ? await lendableEncoder(config, closers) : undefined;
  const lanes: ThreadLane[] = [];
  // Flushes follow extraction onto the thread once its lane runs (see startWorkers), ahead of its CPU budget: someone waits for them.
  const service = new MemoryService(ports, config, clock, logger.child({ component: 'service' }), (scope, maxWaitMs) => lanes[0]?.run(scope, maxWaitMs, 'all', false) ?? null);
  const consumers: Consumer[] = [];
  const sweepers: Array<() => void> = [];
  const probeLlm = llmProbes(config);
  return {
    config,
    service,
    ports,
    logger,
    clock,
    startWorkers() {
      const w = config.worker;
      sweepers.push(startDeadLetterSweeper(ports.bus, { intervalMs: w.deadLetterRetryMs, maxIntervalMs: w.deadLetterRetryMaxMs }, logger.child({ component: 'dead-letters' })));
      const lane = usesThreadLane(config) ? startLane(config, ports, logger, encode) : null;
      if (!lane) {
        consumers.push(startExtractionWorker(ports.bus, service.extraction, config.worker));
        return;
      }
      lanes.push(lane);
      // The bus (dedup, retries, dead letters, depth) stays here; only the runs move to the thread.
      consumers.push(startExtractionWorker(ports.bus, service.extraction, config.worker, (scope, maxWaitMs, mode) => lane.run(scope, maxWaitMs, mode)));
    },
    async workersReady() {
      await Promise.all(lanes.map((l) => l.ready()));
    },
    extractionThread() {
      return lanes[0]?.stats() ?? null;
    },
    reachability: async () => (await Promise.all([reachability(config), probeLlm()])).flat(),
    async close() {
      // Consumers stop taking jobs at once; their in-flight jobs settle when the lanes have let them
      // commit (or, past the lanes' stop timeout, been terminated: those turns stay buffered).
      for (const stop of sweepers.splice(0)) stop();
      service.stopRetries();
      const stopping = consumers.splice(0).map((c) => c.stop());
      await Promise.all(lanes.splice(0).map((l) => l.close()));
      await Promise.all(stopping);
      // Bus first so no new job starts, then the stores; each closed once even when shared.
      for (const close of closers.reverse()) await close().catch((err: unknown) => logger.warn('close failed', { err }));
    },
  };
}

/** The thread lane, or null (logged) when this process cannot load it: extraction then runs inline. */
function startLane(config: Config, ports: Ports, logger: Logger, encode: ThreadLaneOptions['encode']): ThreadLane | null {
  try {
    // The gateway removes extracted turns on its own connection: the append's file keeps one writer.
    return startThreadLane(config, {
      events: ports.events,
      logger,
      removeTurns: (scope, turnIds) => ports.buffer.remove(scope, turnIds),
      ...(encode ? { encode, encodeShare: config.embeddings.laneEncoderShare } : {}),
      cpuShare: config.worker.laneCpuShare,
    });
  } catch (err) {
    logger.warn('extraction thread unavailable; extracting on the gateway thread', { err });
    return null;
  }
}

/**
 * The sentence encoder the gateway lends its extraction thread: the process's embed thread,
 * so the process holds one copy of the model instead of two (~30 MiB each on the int8 runtime, ~150 MiB on TF.js). Only when the
 * gateway runs the model on that thread (`embeddings.modelThread`): lent encoding on the
 * event loop would stall acks.
 */
async function lendableEncoder(config: Config, closers: Array<() => Promise<void>>): Promise<ThreadLaneOptions['encode']> {
  const kind = config.adapters.embedder;
  if ((kind !== 'use-lite' && kind !== 'fused') || !config.embeddings.modelThread) return undefined;
  const { leaseUseLiteThread } = await import('../adapters/use-lite/index.ts');
  const lease = leaseUseLiteThread(config.embeddings.encoderRuntime);
  closers.push(() => lease.release());
  return (texts) => lease.model.embed(texts);
}

/**
 * The configured Embedder. Model-backed ones load their weights lazily, on the first embed call.
 * On the gateway thread the model runs on an embed thread (a query embedding is a few ms of
 * synchronous wasm that would stall every append ack); the extraction thread borrows that
 * thread (`lentEncoder`) or, when none is lent, runs its own copy in process. The embed
 * thread stops with the runtime.
 */
async function buildEmbedder(config: Config, logger: Logger, closers: Array<() => Promise<void>>, extractionThread: boolean, lentEncoder?: UseLiteModel): Promise<Embedder> {
  const kind = config.adapters.embedder;
  if (kind === 'openai') return new (await import('../adapters/openai/index.ts')).OpenAiEmbedder({ ...config.embeddings, dimensions: embedderDimensions(config) });
  const offline = await import('../adapters/offline/index.ts');
  if (kind === 'offline') return new offline.OfflineEmbedder({ dimensions: embedderDimensions(config) });
  if (kind === 'static' || kind === 'static-fused') return buildStaticEmbedder(config, logger, new offline.OfflineEmbedder());
  const { UseLiteEmbedder } = await import('../adapters/use-lite/index.ts');
  const maxWords = config.embeddings.semanticMaxWords;
  const useLite = new UseLiteEmbedder({
    runIn: extractionThread || !config.embeddings.modelThread ? 'in-process' : 'thread',
    runtime: config.embeddings.encoderRuntime,
    ...(lentEncoder ? { model: lentEncoder } : {}),
    ...(maxWords ? { maxWords } : {}),
  });
  closers.push(() => useLite.close());
  if (kind === 'use-lite') return useLite;
  const { FusedEmbedder } = await import('../adapters/fused/index.ts');
  const share = config.embeddings.fusedSemanticShare;
  return new FusedEmbedder([
    { embedder: new offline.OfflineEmbedder(), weight: 1 - share },
    { embedder: useLite, weight: share, costly: true, view: encoderView },
  ]);
}

/**
 * The distilled USE-lite table: pure JS at query time. Its first start with no cached table
 * builds it with USE-lite on the embed thread (stopped when done), so the model's memory is
 * held only while the table is made; the runtime's warm-up starts that in the background.
 */
async function buildStaticEmbedder(config: Config, logger: Logger, hashing: Embedder): Promise<Embedder> {
  const { StaticUseEmbedder } = await import('../adapters/static-use/index.ts');
  const { UseLiteEmbedder } = await import('../adapters/use-lite/index.ts');
  const staticUse = new StaticUseEmbedder({
    ...(config.embeddings.staticCacheDir ? { cacheDir: config.embeddings.staticCacheDir } : {}),
    teacher: () => {
      const teacher = new UseLiteEmbedder({ runIn: 'thread' });
      return { embed: (texts) => teacher.embed(texts), close: () => teacher.close() };
    },
    onReady: (info) => (info.built ? logger.info('static embedder table built', info) : undefined),
    onCacheError: (err) => logger.warn('static embedder table could not be cached; it is used from memory and built again at the next start', { err }),
  });
  if (config.adapters.embedder === 'static') return staticUse;
  const { FusedEmbedder } = await import('../adapters/fused/index.ts');
  const share = config.embeddings.staticFusedShare;
  return new FusedEmbedder([
    { embedder: hashing, weight: 1 - share },
    { embedder: staticUse, weight: share },
  ]);
}

async function buildPorts(config: Config, clock: Clock, logger: Logger, closers: Array<() => Promise<void>>): Promise<Ports> {
  // Stores first: closers run in reverse, so the bus stops (waiting for its in-flight jobs) before any store closes.
  const stores = await openStores(config, clock, logger, closers);
  const a = config.adapters;
  const natsNeeded = a.bus === 'nats' || a.events === 'nats';
  const natsMod = natsNeeded ? await import('../adapters/nats/index.ts') : null;
  const nc = natsMod ? await natsMod.connectNats(config.nats.servers) : null;
  if (nc) closers.push(async () => void (await nc.drain().catch(() => nc.close())));
  const memory = await import('../adapters/inprocess/index.ts');
  const events = a.events === 'nats' ? new natsMod!.NatsEventBus(nc!, config.nats.subjectPrefix) : new memory.InProcessEventBus();
  const bus =
    a.bus === 'nats'
      ? await natsMod!.JetStreamJobBus.create(nc!, {
          stream: config.nats.stream,
          subjectPrefix: config.nats.subjectPrefix,
          ackWaitMs: config.nats.ackWaitMs,
          maxDeliver: config.worker.maxDeliver,
          logger,
        })
      : new memory.InProcessJobBus({ logger });
  closers.push(() => bus.close());
  return { ...stores, events, bus };
}

/** Every port but the two buses: what the extraction thread opens, and what the gateway's runtime opens first. */
export type Stores = Omit<Ports, 'bus' | 'events'>;

/**
 * Open the configured stores, lock, extractor and embedder (with the ACU index sized to it), pushing
 * their closers. The one builder of extraction dependencies: the runtime calls it, and so does the
 * extraction thread (`extractionThread`: its SQLite connection leaves WAL checkpoints to the
 * gateway's, its embedding model runs in that thread), which needs nothing else.
 */
export async function openStores(config: Config, clock: Clock, logger: Logger, closers: Array<() => Promise<void>>, extractionThread = false, lentEncoder?: UseLiteModel): Promise<Stores> {
  const a = config.adapters;
  const needsSqlite = a.buffer === 'sqlite' || a.cache === 'sqlite' || a.documents === 'sqlite' || a.cold === 'sqlite' || a.acus === 'sqlite';
  const sqlite = needsSqlite ? await import('../adapters/sqlite/index.ts') : null;
  // One WAL checkpointer per file is enough: the gateway's connection runs it.
  const fileOptions = extractionThread ? { checkpointer: false as const } : {};
  const db = sqlite ? sqlite.openSqlite(config.sqlite.path, fileOptions) : null;
  if (db) closers.push(async () => void db.close());
  // The turn buffer in a file of its own, so an append never waits for the lane's writes (see turns-file.ts).
  // Its checkpointer keeps the gateway's scheduling policy: its RESTART can make an append wait.
  const turnsDb = a.buffer === 'sqlite' ? sqlite!.openSqlite(sqlite!.turnsFileOf(config.sqlite.path), extractionThread ? fileOptions : { checkpointer: { callPath: true } }) : null;
  if (turnsDb) closers.push(async () => void turnsDb.close());
  if (turnsDb && !extractionThread) {
    const { moved } = sqlite!.moveTurnTables(turnsDb, config.sqlite.path);
    if (moved > 0) logger.info('moved the turn buffer into its own file', { rows: moved, file: sqlite!.turnsFileOf(config.sqlite.path) });
  }

  await probeServers(config);
  const redisNeeded = a.buffer === 'redis' || a.cache === 'redis' || a.lock === 'redis';
  const redisMod = redisNeeded ? await import('../adapters/redis/index.ts') : null;
  const redis = redisMod ? redisMod.createRedis(config.redis.url, { onError: (err) => logger.warn('redis connection error', { err: err.message }) }) : null;
  if (redis) closers.push(async () => void (await redis.quit().catch(() => redis.disconnect())));

  const mongoNeeded = a.documents === 'mongo' || a.cold === 'mongo';
  const mongo = mongoNeeded ? await (await import('../adapters/mongo/index.ts')).createMongoStores(config.mongo.url, config.mongo.db) : null;
  if (mongo) closers.push(() => mongo.close());

  const memory = await import('../adapters/inprocess/index.ts');
  const prefix = config.redis.keyPrefix;

  const buffer =
    a.buffer === 'redis'
      ? new redisMod!.RedisTurnBuffer(redis!, prefix, { idempotencyHorizonMs: config.redis.idempotencyHorizonMs, appendDeadlineMs: config.redis.appendDeadlineMs, now: () => clock.now() })
      : new sqlite!.SqliteTurnBuffer(turnsDb!);
  const cache = a.cache === 'redis' ? new redisMod!.RedisContextCache(redis!, prefix) : new sqlite!.SqliteContextCache(db!);
  const documents = a.documents === 'mongo' ? mongo!.documents : new sqlite!.SqliteDocumentStore(db!);
  const cold = a.cold === 'mongo' ? mongo!.cold : new sqlite!.SqliteColdArchive(db!);
  const lock = a.lock === 'redis' ? new redisMod!.RedisUserLock(redis!, prefix) : new memory.InProcessUserLock(clock);

  const embedder = await buildEmbedder(config, logger, closers, extractionThread, lentEncoder);
  // Load the model while idle: the first search or extraction would otherwise wait ~0.3 s for it.
  embedder.warm?.().catch((err: unknown) => logger.warn('embedder warm-up failed; the first call will retry', { err }));
  const extractor = a.extractor === 'openai' ? new (await import('../adapters/openai/index.ts')).OpenAiExtractor(config.llm) : new (await import('../adapters/offline/index.ts')).OfflineExtractor();
  // The ACU index takes its vector size from the embedder: rows of another size (an earlier embedder) never meet a query.
  const acus =
    a.acus === 'qdrant'
      ? await (await import('../adapters/qdrant/index.ts')).createQdrantAcuIndex({ ...config.qdrant, dimensions: embedder.dimensions })
      : new sqlite!.SqliteAcuIndex(db!, { dimensions: embedder.dimensions, vectorCacheMiB: config.sqlite.vectorCacheMiB });
  if (embedder.dimensions !== embedderDimensions(config)) logger.warn('embedder dimensions differ from config', { embedder: embedder.dimensions, config: embedderDimensions(config) });
  return { buffer, cache, documents, cold, acus, lock, extractor, embedder };
}
