import { z } from 'zod';

const smartKeepWeights = z.strictObject({
  recency: z.number().min(0).default(0.5),
  question: z.number().min(0).default(0.3),
  density: z.number().min(0).default(0.2),
});

/** Memory parameters: the paper's sensitivity table (§4.4) plus search knobs, with the paper's defaults. */
export const memorySchema = z.strictObject({
  /** Un-extracted tokens that trigger an extraction job. */
  tokenThreshold: z.int().positive().default(4000),
  /** Turns Smart Keep always keeps hot (the last question–answer pairs). */
  minKeptTurns: z.int().min(0).default(4),
  /** Upper bound on kept turns; the rest form the compression window. */
  maxKeptTurns: z.int().min(0).default(8),
  /** Turns per ACU compression segment. */
  segmentTurns: z.int().min(1).max(50).default(5),
  /** Recent turns returned at session start. */
  contextWindowTurns: z.int().min(0).default(10),
  /** Default TTL of ephemeral facts. */
  ephemeralTtlHours: z.number().positive().default(24),
  /** Cosine at or above which a new ACU is a duplicate of an existing one. */
  dedupThreshold: z.number().min(0).max(1).default(0.95),
  /** Best vector score below which the cascade falls back to the cold archive. */
  confidenceThreshold: z.number().min(0).max(1).default(0.35),
  /** A user turn with asrConfidence below this yields only `inferred` facts. */
  lowAsrConfidence: z.number().min(0).max(1).default(0.6),
  /** Fuse a BM25 leg into vector search by reciprocal rank fusion. */
  hybrid: z.boolean().default(true),
  /** RRF constant k. */
  rrfK: z.int().positive().default(60),
  /** Default number of search results. */
  searchK: z.int().min(1).max(100).default(5),
  /** Session summaries kept in the hot document. */
  maxSummaries: z.int().min(0).default(5),
  /**
   * Most ms a search waits for field and turn vectors not cached yet (an embedder that measures
   * meaning; never more than half a request's deadline): past it those are matched by words.
   * 30: one encoder call of two short turns (~15-25 ms here), so a turn said just before the
   * search and not warmed yet is still matched by meaning, while a search on a cold cache
   * (warming off, another gateway's call) stays near the 50 ms search target: query embedding
   * ~10-15 ms + 30.
   */
  meaningWaitMs: z.number().min(0).default(30),
  /**
   * Share of one core the warm queue may spend embedding appended turns (and schema fields) for
   * search by meaning, off the call path; 0 turns warming off (searches embed within the wait).
   * 0.1: ~5-14 turns/s per process (the fused encoder costs ~7-18 ms a turn on this 2-core box,
   * idle to loaded), the pace of dozens of concurrent calls; past it the newest are warmed first.
   */
  meaningWarmShare: z.number().min(0).max(1).default(0.1),
  /**
   * λ of maximal marginal relevance over the ACU results (src/memory/mmr.ts): each next result
   * maximises λ·score − (1−λ)·(its highest cosine with a result above it), so near-repeats of a
   * higher result make room for other evidence. 1: relevance order only. 0.7 is the usual
   * textbook weight, set before it was measured (LoCoMo dev: BENCHMARKS.md), not tuned on it.
   */
  mmrLambda: z.number().min(0).max(1).default(0.7),
  smartKeep: smartKeepWeights.prefault({}),
});

/** Values of `adapters.embedder` (MEMGATE_EMBEDDER). */
export const EMBEDDERS = ['offline', 'use-lite', 'fused', 'static', 'static-fused', 'openai'] as const;

/** Vector size of each embedder when `embeddings.dimensions` is unset; use-lite and fused have a fixed size. */
export const EMBEDDER_DIMENSIONS = { offline: 384, 'use-lite': 512, fused: 384 + 512, static: 256, 'static-fused': 384 + 256, openai: 384 } as const;

const adaptersSchema = z.strictObject({
  buffer: z.enum(['sqlite', 'redis']).default('sqlite'),
  cache: z.enum(['sqlite', 'redis']).default('sqlite'),
  bus: z.enum(['memory', 'nats']).default('memory'),
  lock: z.enum(['memory', 'redis']).default('memory'),
  events: z.enum(['memory', 'nats']).default('memory'),
  documents: z.enum(['sqlite', 'mongo']).default('sqlite'),
  cold: z.enum(['sqlite', 'mongo']).default('sqlite'),
  acus: z.enum(['sqlite', 'qdrant']).default('sqlite'),
  extractor: z.enum(['offline', 'openai']).default('offline'),
  /**
   * fused (default) = feature hashing + Universal Sentence Encoder lite (896-d); offline = hashing
   * only (384-d, ~15x cheaper to extract with, lower recall); use-lite = the encoder only (512-d);
   * openai = an endpoint. Fused is the default because it is the one that meets the LoCoMo recall
   * targets with search p95 far inside its budget (BENCHMARKS.md, "Embedders").
   */
  embedder: z.enum(EMBEDDERS, { error: `expected one of ${EMBEDDERS.join(', ')}` }).default('fused'),
});

/** The whole configuration. Parsed once at start (defaults ← profile file ← env ← flags), then frozen. */
export const configSchema = z
  .strictObject({
    profile: z.string().default('embedded'),
    server: z
      .strictObject({
        host: z.string().default('127.0.0.1'),
        port: z.int().min(0).max(65535).default(7700),
        /** Optional second port answering health checks in any HTTP version (uWS answers only HTTP/1.1); 0 picks a free one. */
        healthPort: z.int().min(0).max(65535).optional(),
        /** Largest turn text accepted (bytes of UTF-8). */
        maxTurnBytes: z
          .int()
          .positive()
          .default(32 * 1024),
        /** Largest WebSocket frame or HTTP body answered; larger frames may close with 1009. */
        maxPayloadBytes: z
          .int()
          .positive()
          .default(1024 * 1024),
        /** Per-connection send buffer before backpressure handling kicks in. */
        maxBackpressureBytes: z
          .int()
          .positive()
          .default(1024 * 1024),
        idleTimeoutS: z.int().min(0).default(120),
        /**
         * A call socket that closes without `end` ends its call this long after (a dropped call):
         * long enough for a client's reconnect, on any gateway, to reopen it first. 0 ends at once.
         */
        dropGraceMs: z.int().min(0).default(5_000),
        /**
         * A gateway's lease on the calls whose sockets it holds, renewed every third of it in the shared
         * store: the calls of a gateway gone (killed, crashed) for longer, plus `dropGraceMs`, are ended
         * as dropped by any other gateway's sweep, or by the next one to start.
         */
        callLeaseMs: z.int().min(1_000).default(15_000),
        /** How often a gateway sweeps the shared store for calls to end: deferred ends due, calls of gone gateways. */
        sweepIntervalMs: z.int().min(50).default(1_000),
        /** Run extraction workers inside the gateway process (embedded default). */
        inlineWorkers: z.boolean().default(true),
      })
      .prefault({}),
    auth: z
      .strictObject({
        /** API keys as sha256 hex hashes → tenant. Raw keys never stored. */
        keys: z.array(z.strictObject({ sha256: z.string().regex(/^[0-9a-f]{64}$/), tenantId: z.string().min(1) })).default([]),
        /** Serve without keys on the production profile or a public address (open dev mode). */
        allowOpen: z.boolean().default(false),
      })
      .prefault({}),
    log: z.strictObject({ level: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info') }).prefault({}),
    sqlite: z
      .strictObject({
        /** The shared file; the turn buffer and sessions live beside it in `<name>.turns.db` (adapters/sqlite/turns-file.ts). */
        path: z.string().default('./data/memgate.db'),
        /**
         * MiB of users' binary ACU codes the embedded vector index holds in memory (LRU over users;
         * 896-d: ~1.2 MiB per 10k ACUs). 0: every vector search asks sqlite-vec's KNN.
         */
        vectorCacheMiB: z.number().min(0).default(128),
      })
      .prefault({}),
    schemasDir: z.string().default('./config/schemas'),
    adapters: adaptersSchema.prefault({}),
    redis: z
      .strictObject({
        url: z.string().default('redis://127.0.0.1:6379'),
        keyPrefix: z.string().default('mg:'),
        /** How long an archived turn's id still dedupes a retried append (0 = forever). */
        idempotencyHorizonMs: z
          .int()
          .min(0)
          .default(7 * 24 * 3_600_000),
        /** An append waiting longer than this for Redis is answered `unavailable` (the client retries by turnId). */
        appendDeadlineMs: z.int().positive().default(250),
      })
      .prefault({}),
    nats: z
      .strictObject({
        servers: z.string().default('nats://127.0.0.1:4222'),
        stream: z.string().default('MEMGATE_JOBS'),
        subjectPrefix: z.string().default('memgate'),
        /** A job not acked within this is redelivered (how long a dead worker's job waits); live workers heartbeat every third of it. */
        ackWaitMs: z.int().min(1000).default(10_000),
      })
      .prefault({}),
    mongo: z.strictObject({ url: z.string().default('mongodb://127.0.0.1:27017'), db: z.string().default('memgate') }).prefault({}),
    qdrant: z
      .strictObject({
        url: z.string().default('http://127.0.0.1:6333'),
        apiKey: z.string().optional(),
        collection: z.string().default('memgate_acus'),
        /** Longest one Qdrant request may take before it fails (`unavailable`). */
        timeoutMs: z.int().positive().default(10_000),
      })
      .prefault({}),
    llm: z
      .strictObject({
        baseURL: z.string().default('http://127.0.0.1:11434/v1'),
        apiKey: z.string().default('none'),
        model: z.string().default('gpt-4o-mini'),
        timeoutMs: z.int().positive().default(20_000),
        maxRetries: z.int().min(0).default(1),
      })
      .prefault({}),
    embeddings: z
      .strictObject({
        baseURL: z.string().default('http://127.0.0.1:11434/v1'),
        apiKey: z.string().default('none'),
        model: z.string().default('text-embedding-3-small'),
        /** Vector size: offline and openai 384 unless set; use-lite is 512 and fused 896 (leave unset or give exactly that). */
        dimensions: z.int().positive().optional(),
        timeoutMs: z.int().positive().default(10_000),
        /**
         * Share of the sentence encoder in the fused embedder's cosine (the rest is the hashing
         * embedder's). 0.65 chosen on LoCoMo's dev split (0.5 / 0.6 / 0.65 / 0.7 measured; BENCHMARKS.md).
         */
        fusedSemanticShare: z.number().gt(0).lt(1).default(0.65),
        /**
         * use-lite / fused on the gateway: run the model on an embed thread (default), so a query
         * embedding never holds the event loop that acks appends. false: on the gateway thread itself.
         */
        modelThread: z.boolean().default(true),
        /**
         * use-lite / fused: what runs the sentence encoder. 'int8' (default): the graph written
         * out in src/adapters/use-lite/int8 on a wasm SIMD kernel, int8 weights (~30 MiB resident,
         * vectors within a cosine of ~0.9997 of TF.js's). 'tfjs': TF.js's wasm backend, the float
         * reference (~130 MiB resident, about twice the CPU per text).
         */
        encoderRuntime: z.enum(['int8', 'tfjs']).default('int8'),
        /** use-lite / fused: words of a text the sentence encoder sees at most (unset: all); hashing always sees the whole text. */
        semanticMaxWords: z.int().positive().optional(),
        /**
         * fused: a run whose job waited longer than this in the queue (the lane is behind) indexes its
         * new ACUs with the hashing part only and re-embeds them with the encoder later
         * (pipeline/deferred-acus.ts); 0 never defers.
         */
        deferAfterMs: z.int().min(0).default(3000),
        /**
         * use-lite / fused, embedded lane: share of one core the sentence encoder may spend on the
         * extraction thread's texts (paced; 1: unpaced). What it cannot keep up with falls behind
         * and is indexed lexically, re-embedded when the load passes (deferAfterMs).
         */
        laneEncoderShare: z.number().gt(0).max(1).default(0.5),
        /** fused: deferred ACUs a run that is not behind re-embeds at most (a flush re-embeds them all). */
        upgradeBatch: z.int().min(0).default(64),
        /** fused: deferred ACUs kept per user; past it the oldest keep their hashing vector for good. */
        maxDeferred: z.int().min(0).default(512),
        /** static-fused: share of the static (distilled USE-lite) table in the fused cosine, the rest the hashing embedder's. */
        staticFusedShare: z.number().gt(0).lt(1).default(0.5),
        /**
         * static / static-fused: directory of the cached piece table, built once from the installed
         * model package (unset: node_modules/.cache/memgate beside the package).
         */
        staticCacheDir: z.string().min(1).optional(),
      })
      .prefault({}),
    memory: memorySchema.prefault({}),
    worker: z
      .strictObject({
        concurrency: z.int().min(1).default(2),
        maxDeliver: z.int().min(1).default(5),
        retryDelayMs: z.int().min(0).default(1000),
        /** The per-user extraction lease, renewed every third of it while a run lasts: a dead worker frees its user within this. */
        lockTtlMs: z.int().positive().default(10_000),
        /** Dead-lettered jobs go back on the queue this often (doubling while they keep failing, up to the max). */
        deadLetterRetryMs: z.int().positive().default(30_000),
        deadLetterRetryMaxMs: z.int().positive().default(300_000),
        /**
         * Nice value of the embedded extraction thread (Linux: per thread), so the OS ranks the call
         * path above extraction. 0 keeps the gateway's priority; where it cannot be set, extraction runs unchanged.
         */
        niceness: z.int().min(0).max(19).default(10),
        /**
         * Linux: the embedded extraction thread runs under SCHED_IDLE (via util-linux `chrt`), on cores
         * the call path leaves idle; a waking gateway thread preempts it at once, where a niced one
         * finishes its slice first. Once the lane is up, `memgate serve` puts the process's helper
         * threads (V8's GC workers, libuv's pool, the memory file's checkpointer) there too, all but
         * the event loop, the embed thread and the turns file's checkpointer (BENCHMARKS.md,
         * SCHED_IDLE). On a saturated machine the lane waits for an idle core, so its backlog (and a
         * flush) waits too. Where it cannot be set, nice applies.
         */
        idlePolicy: z.boolean().default(true),
        /**
         * Share of one core the embedded extraction lane may keep busy: its thread's busy time plus
         * the lent encoder's time on its texts. Background runs wait for it (flushes do not). Any CPU
         * work on the machine lengthens the acks' tail, whatever its nice value (measured); held to a
         * share, the lane coalesces windows and defers the encoder when behind instead. 1: no limit.
         */
        laneCpuShare: z.number().gt(0).max(1).default(0.35),
        /** How long a flush waits for a run of the same user in progress (then extracts what is left) before answering `unavailable`. */
        flushDeadlineMs: z.int().min(1000).default(60_000),
        /** Tokens one run takes at most, in token-threshold windows: a user far behind is caught up in runs of this size, oldest turns first. */
        maxRunWindows: z.int().min(1).default(4),
        /** A user whose unextracted turns reach this many token-threshold windows raises `extraction.backlog` (and again when back under). */
        backlogAlertWindows: z.int().min(1).default(3),
      })
      .prefault({}),
  })
  .superRefine((c, ctx) => {
    const embedder = c.adapters.embedder;
    const fixed = embedder === 'offline' || embedder === 'openai' ? null : EMBEDDER_DIMENSIONS[embedder];
    if (fixed !== null && c.embeddings.dimensions !== undefined && c.embeddings.dimensions !== fixed) {
      ctx.addIssue({
        code: 'custom',
        path: ['embeddings', 'dimensions'],
        message: `the ${embedder} embedder makes ${fixed}-d vectors, not ${c.embeddings.dimensions}; leave embeddings.dimensions (MEMGATE_EMBEDDINGS_DIMENSIONS) unset or set it to ${fixed}`,
      });
    }
  });

/** Vector size of the configured embedder (what the ACU index is created with). */
export function embedderDimensions(c: Pick<Config, 'adapters' | 'embeddings'>): number {
  const embedder = c.adapters.embedder;
  if (embedder === 'offline' || embedder === 'openai') return c.embeddings.dimensions ?? EMBEDDER_DIMENSIONS[embedder];
  return EMBEDDER_DIMENSIONS[embedder];
}

export type Config = z.infer<typeof configSchema>;
export type MemoryConfig = z.infer<typeof memorySchema>;

/** Embedded defaults, parsed from an empty object: what `npm start` runs with. */
export function defaultConfig(overrides: unknown = {}): Config {
  return configSchema.parse(overrides);
}

/** The defaults every adapter falls back to: one source, the schema above (adapters never restate a default). */
export const CONFIG_DEFAULTS: Readonly<Config> = defaultConfig();
