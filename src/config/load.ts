import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { MemgateError } from '../core/errors.ts';
import { configSchema, type Config } from './schema.ts';

/** Environment variables that override the profile file (URLs, secrets, ports). */
const ENV_PATHS: Record<string, string> = {
  MEMGATE_HOST: 'server.host',
  MEMGATE_PORT: 'server.port',
  MEMGATE_LOG_LEVEL: 'log.level',
  MEMGATE_SQLITE_PATH: 'sqlite.path',
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
  MEMGATE_TOKEN_THRESHOLD: 'memory.tokenThreshold',
};

const FLAG_PATHS: Record<string, string> = {
  '--port': 'server.port',
  '--host': 'server.host',
  '--data': 'sqlite.path',
  '--log-level': 'log.level',
};

/** Parsed command line: the sub-command, its positional arguments and the config flags. */
export interface CommandLine {
  command: string;
  args: string[];
  flags: Record<string, string>;
}

/** Split argv (without node and script) into command, positionals and `--flag value` pairs. */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const args: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      if (eq > 0) flags[a.slice(0, eq)] = a.slice(eq + 1);
      else if (i + 1 < argv.length && !argv[i + 1]!.startsWith('--')) flags[a] = argv[++i]!;
      else flags[a] = 'true';
    } else args.push(a);
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

/**
 * Load the configuration once: embedded defaults ← `config/<profile>.json` ← environment ← flags.
 * `MEMGATE_API_KEYS=key1:tenantA,key2:tenantB` adds keys (hashed here, raw keys are not kept).
 * The only place that reads process.env.
 */
export function loadConfig(argv: readonly string[] = [], env: NodeJS.ProcessEnv = process.env, configDir = 'config'): Readonly<Config> {
  const { flags } = parseCommandLine(argv);
  const profile = flags['--profile'] ?? env['MEMGATE_PROFILE'] ?? 'embedded';
  const file = flags['--config'] ?? resolve(configDir, `${profile}.json`);
  let raw: Record<string, unknown> = {};
  if (existsSync(file)) {
    try {
      raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch (err) {
      throw new MemgateError('bad_request', `config file ${file} is not valid JSON`, { cause: err });
    }
  } else if (profile !== 'embedded' || flags['--config']) {
    throw new MemgateError('bad_request', `config file ${file} not found`);
  }
  raw['profile'] = profile;
  for (const [name, path] of Object.entries(ENV_PATHS)) {
    const v = env[name];
    if (v !== undefined && v !== '') setPath(raw, path, v);
  }
  for (const [flag, path] of Object.entries(FLAG_PATHS)) {
    const v = flags[flag];
    if (v !== undefined) setPath(raw, path, v);
  }
  const keys = env['MEMGATE_API_KEYS'];
  if (keys) {
    const auth = (raw['auth'] ??= {}) as { keys?: Array<{ sha256: string; tenantId: string }> };
    auth.keys ??= [];
    for (const pair of keys.split(',').map((s) => s.trim()).filter(Boolean)) {
      const idx = pair.lastIndexOf(':');
      if (idx <= 0) throw new MemgateError('bad_request', 'MEMGATE_API_KEYS entries must be KEY:TENANT');
      auth.keys.push({ sha256: hashApiKey(pair.slice(0, idx)), tenantId: pair.slice(idx + 1) });
    }
  }
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new MemgateError('bad_request', `invalid configuration at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  return deepFreeze(parsed.data);
}

function deepFreeze<T>(o: T): Readonly<T> {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
