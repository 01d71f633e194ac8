import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemgateError } from '../core/errors.ts';
import { configSchema, type Config } from './config-schema.ts';

/** Environment variables that override the profile file (URLs, secrets, ports). */
const ENV_PATHS: Record<string, string> = {
  MEMGATE_HOST: 'server.host',
  MEMGATE_PORT: 'server.port',
  MEMGATE_HEALTH_PORT: 'server.healthPort',
  MEMGATE_DROP_GRACE_MS: 'server.dropGraceMs',
  MEMGATE_CALL_LEASE_MS: 'server.callLeaseMs',
  MEMGATE_SWEEP_INTERVAL_MS: 'server.sweepIntervalMs',
  MEMGATE_LOG_LEVEL: 'log.level',
  MEMGATE_SQLITE_PATH: 'sqlite.path',
  MEMGATE_SQLITE_VECTOR_CACHE_MIB: 'sqlite.vectorCacheMiB',
  MEMGATE_SCHEMAS_DIR: 'schemasDir',
  MEMGATE_INLINE_WORKERS: 'server.inlineWorkers',
  MEMGATE_REDIS_URL: 'redis.url',
  MEMGATE_REDIS_PREFIX: 'redis.keyPrefix',
  MEMGATE_NATS_URL: 'nats.servers',
  MEMGATE_NATS_STREAM: 'nats.stream',
  MEMGATE_NATS_PREFIX: 'nats.subjectPrefix',
  MEMGATE_NATS_ACK_WAIT_MS: 'nats.ackWaitMs',
  MEMGATE_MONGO_URL: 'mongo.url',
  MEMGATE_MONGO_DB: 'mongo.db',
  MEMGATE_QDRANT_URL: 'qdrant.url',
  MEMGATE_QDRANT_API_KEY: 'qdrant.apiKey',
  MEMGATE_QDRANT_COLLECTION: 'qdrant.collection',
  MEMGATE_LLM_BASE_URL: 'llm.baseURL',
  MEMGATE_LLM_API_KEY: 'llm.apiKey',
  MEMGATE_LLM_MODEL: 'llm.model',
  MEMGATE_EMBEDDINGS_BASE_URL: 'embeddings.baseURL',
  MEMGATE_EMBEDDINGS_API_KEY: 'embeddings.apiKey',
  MEMGATE_EMBEDDINGS_MODEL: 'embeddings.model',
  MEMGATE_EMBEDDINGS_DIMENSIONS: 'embeddings.dimensions',
  MEMGATE_EMBEDDINGS_FUSED_SHARE: 'embeddings.fusedSemanticShare',
  MEMGATE_EMBEDDINGS_STATIC_SHARE: 'embeddings.staticFusedShare',
  MEMGATE_EMBEDDINGS_STATIC_CACHE_DIR: 'embeddings.staticCacheDir',
  MEMGATE_EMBEDDINGS_MODEL_THREAD: 'embeddings.modelThread',
  MEMGATE_EMBEDDINGS_ENCODER_RUNTIME: 'embeddings.encoderRuntime',
  MEMGATE_EMBEDDINGS_SEMANTIC_MAX_WORDS: 'embeddings.semanticMaxWords',
  MEMGATE_EMBEDDINGS_DEFER_AFTER_MS: 'embeddings.deferAfterMs',
  MEMGATE_EMBEDDINGS_LANE_SHARE: 'embeddings.laneEncoderShare',
  MEMGATE_TOKEN_THRESHOLD: 'memory.tokenThreshold',
  MEMGATE_MEANING_WAIT_MS: 'memory.meaningWaitMs',
  MEMGATE_MEANING_WARM_SHARE: 'memory.meaningWarmShare',
  MEMGATE_SEARCH_MMR_LAMBDA: 'memory.mmrLambda',
  MEMGATE_WORKER_NICENESS: 'worker.niceness',
  MEMGATE_WORKER_IDLE_POLICY: 'worker.idlePolicy',
  MEMGATE_LANE_CPU_SHARE: 'worker.laneCpuShare',
  MEMGATE_FLUSH_DEADLINE_MS: 'worker.flushDeadlineMs',
  MEMGATE_EXTRACTOR: 'adapters.extractor',
  MEMGATE_EMBEDDER: 'adapters.embedder',
  MEMGATE_ALLOW_OPEN: 'auth.allowOpen',
};

const FLAG_PATHS: Record<string, string> = {
  '--port': 'server.port',
  '--host': 'server.host',
  '--data': 'sqlite.path',
  '--log-level': 'log.level',
  '--allow-open': 'auth.allowOpen',
};

/** Flags that take a value; the rest of KNOWN_FLAGS are switches. */
const VALUE_FLAGS = new Set(['--port', '--host', '--data', '--log-level', '--config', '--profile']);
const SWITCHES = new Set(['--help', '--version', '--allow-open']);
const SHORT: Record<string, string> = { '-h': '--help', '-v': '--version' };

/** A command line that does not follow the usage: exit 2 with the usage, never `internal`. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Parsed command line: the sub-command, its positional arguments and the config flags. */
export interface CommandLine {
  command: string;
  args: string[];
  flags: Record<string, string>;
}

/** Split argv (without node and script) into command, positionals and flags; unknown flags are a UsageError. */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const args: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = SHORT[argv[i]!] ?? argv[i]!;
    if (!a.startsWith('-') || a === '-') {
      args.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(0, eq) : a;
    if (SWITCHES.has(name)) flags[name] = eq > 0 ? a.slice(eq + 1) : 'true';
    else if (VALUE_FLAGS.has(name)) {
      if (eq > 0) flags[name] = a.slice(eq + 1);
      else if (i + 1 < argv.length && !argv[i + 1]!.startsWith('-')) flags[name] = argv[++i]!;
      else throw new UsageError(`${name} needs a value`);
    } else throw new UsageError(`unknown flag "${name}"`);
  }
  return { command: args.shift() ?? 'serve', args, flags };
}

function setPath(target: Record<string, unknown>, path: string, raw: string): void {
  const parts = path.split('.');
  let node = target;
  for (const p of parts.slice(0, -1)) {
    if (typeof node[p] !== 'object' || node[p] === null) node[p] = {};
    node = node[p] as Record<string, unknown>;
  }
  // Env and flags are strings; coerce the obvious scalars so the schema sees real types.
  const value = /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw === 'true' ? true : raw === 'false' ? false : raw;
  node[parts[parts.length - 1]!] = value;
}

/** sha256 hex of an API key: only hashes are kept in memory and config. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The package's own config/ (same depth from src/config and dist/config): an installed memgate run from any directory finds its profiles and schemas. */
const PACKAGE_CONFIG_DIR = fileURLToPath(new URL('../../config', import.meta.url));

/** `config/<profile>.json` of the working directory when it has one, else the package's. */
function profileFile(profile: string, configDir: string | undefined): string {
  const dirs = configDir === undefined ? [resolve('config'), PACKAGE_CONFIG_DIR] : [resolve(configDir)];
  const files = dirs.map((d) => join(d, `${profile}.json`));
  return files.find((f) => existsSync(f)) ?? files[0]!;
}

/**
 * Load the configuration once: embedded defaults ← `config/<profile>.json` ← `--config FILE` ← environment ← flags.
 * Without `configDir`, profiles and schemas come from `./config` when it has them, else from the package.
 * `MEMGATE_API_KEYS=key1:tenantA,key2:tenantB` adds keys (hashed here, raw keys are not kept).
 * The only place that reads process.env.
 */
export function loadConfig(argv: readonly string[] = [], env: NodeJS.ProcessEnv = process.env, configDir?: string): Readonly<Config> {
  const { flags } = parseCommandLine(argv);
  const profile = flags['--profile'] ?? env['MEMGATE_PROFILE'] ?? 'embedded';
  const profilePath = profileFile(profile, configDir);
  if (!existsSync(profilePath) && profile !== 'embedded') throw new MemgateError('bad_request', `profile "${profile}" (${profilePath}) not found (--profile / MEMGATE_PROFILE)`);
  let raw = existsSync(profilePath) ? readJson(profilePath) : {};
  // --config FILE layers on the profile (objects merge key by key; values and arrays replace).
  const configFile = flags['--config'];
  if (configFile !== undefined) {
    if (!existsSync(configFile)) throw new MemgateError('bad_request', `config file ${configFile} not found (--config)`);
    raw = layer(raw, readJson(configFile));
  }
  const file = configFile ?? profilePath;
  raw['profile'] = profile;
  if (configDir === undefined && raw['schemasDir'] === undefined && !existsSync('config/schemas')) raw['schemasDir'] = join(PACKAGE_CONFIG_DIR, 'schemas');
  // Where each overridden value came from, so an error names the variable or flag to fix.
  const origin = new Map<string, string>();
  for (const [name, path] of Object.entries(ENV_PATHS)) {
    const v = env[name];
    if (v === undefined || v === '') continue;
    setPath(raw, path, v);
    origin.set(path, `${name}=${JSON.stringify(v)}`);
  }
  for (const [flag, path] of Object.entries(FLAG_PATHS)) {
    const v = flags[flag];
    if (v === undefined) continue;
    setPath(raw, path, v);
    origin.set(path, `${flag} ${JSON.stringify(v)}`);
  }
  const keys = env['MEMGATE_API_KEYS'];
  if (keys) {
    const auth = (raw['auth'] ??= {}) as { keys?: Array<{ sha256: string; tenantId: string }> };
    auth.keys ??= [];
    for (const pair of keys
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const idx = pair.lastIndexOf(':');
      if (idx <= 0) throw new MemgateError('bad_request', 'MEMGATE_API_KEYS entries must be KEY:TENANT');
      auth.keys.push({ sha256: hashApiKey(pair.slice(0, idx)), tenantId: pair.slice(idx + 1) });
    }
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join('.') || '(root)';
    const from = origin.get(path) ?? (existsSync(file) ? `config file ${file}` : undefined);
    const message = `invalid ${from ?? 'configuration'}: ${path}: ${issue?.message}`;
    // A bad flag value is a command-line mistake (exit 2 with the usage); the rest are configuration errors.
    if (from?.startsWith('--')) throw new UsageError(message);
    throw new MemgateError('bad_request', message);
  }
  return deepFreeze(parsed.data);
}

function readJson(file: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object');
    return parsed as Record<string, unknown>;
  } catch (err) {
    throw new MemgateError('bad_request', `config file ${file} is not valid JSON`, { cause: err });
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `over` on top of `base`: nested objects merge key by key, anything else in `over` replaces. */
function layer(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isObject(b) && isObject(v) ? layer(b, v) : v;
  }
  return out;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * Open dev mode (no API keys) answers anyone as tenant "default": refuse it on
 * the production profile or a non-loopback address unless asked for explicitly.
 */
export function assertServeSafe(config: Readonly<Config>): void {
  if (config.auth.keys.length > 0 || config.auth.allowOpen) return;
  if (config.profile !== 'production' && LOOPBACK.has(config.server.host)) return;
  const where = config.profile === 'production' ? 'the production profile' : `host ${config.server.host}`;
  throw new MemgateError(
    'bad_request',
    `refusing open mode (no API keys) on ${where}: set MEMGATE_API_KEYS=KEY:TENANT, or MEMGATE_ALLOW_OPEN=true / --allow-open to serve every caller as tenant "default"`,
  );
}

/** One line per setting that is present but has no effect, so nothing is ignored silently. */
export function configNotices(config: Readonly<Config>, env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  if (config.adapters.extractor === 'offline' && env['MEMGATE_LLM_BASE_URL']) {
    out.push('MEMGATE_LLM_BASE_URL is set but the extractor is offline; set MEMGATE_EXTRACTOR=openai to extract with that LLM');
  }
  if (config.adapters.embedder !== 'openai' && env['MEMGATE_EMBEDDINGS_BASE_URL']) {
    out.push(`MEMGATE_EMBEDDINGS_BASE_URL is set but the embedder is ${config.adapters.embedder}; set MEMGATE_EMBEDDER=openai to embed with it`);
  }
  return out;
}

function deepFreeze<T>(o: T): Readonly<T> {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
