import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/processes.ts';
import { UsageError, assertServeSafe, configNotices, loadConfig, parseCommandLine } from '../../src/config/load.ts';
import { embedderDimensions } from '../../src/config/config-schema.ts';
import { removeDir } from '../support/tmp.ts';

const load = (argv: string[], env: Record<string, string> = {}) => loadConfig(argv, env, 'config');
const messageOf = (fn: () => unknown): string => {
  try {
    fn();
    return 'no error';
  } catch (err) {
    return (err as Error).message;
  }
};

describe('command line', () => {
  it('reads commands, positionals, value flags, switches and their short forms', () => {
    expect(parseCommandLine(['replay', 'f.json', '--data', 'x.db'])).toEqual({ command: 'replay', args: ['f.json'], flags: { '--data': 'x.db' } });
    expect(parseCommandLine(['--port=7701', '-h'])).toEqual({ command: 'serve', args: [], flags: { '--port': '7701', '--help': 'true' } });
    expect(parseCommandLine(['-v']).flags['--version']).toBe('true');
    expect(parseCommandLine(['--help', 'serve']).command).toBe('serve');
  });

  it('refuses unknown flags and value flags without a value as usage errors', () => {
    expect(() => parseCommandLine(['--prot', '7701'])).toThrow(UsageError);
    expect(() => parseCommandLine(['-x'])).toThrow(/unknown flag "-x"/);
    expect(() => parseCommandLine(['--port'])).toThrow(/--port needs a value/);
  });
});

describe('configuration', () => {
  it("finds profiles and schemas in the package when the working directory has none, and prefers the directory's own", () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'memgate-cwd-')));
    const before = process.cwd();
    try {
      process.chdir(dir);
      const c = loadConfig(['--profile', 'production'], {});
      expect([c.profile, c.adapters.buffer, c.schemasDir]).toEqual(['production', 'redis', join(REPO_ROOT, 'config/schemas')]);
      expect(loadConfig([], {}).schemasDir).toBe(join(REPO_ROOT, 'config/schemas'));
      expect(messageOf(() => loadConfig(['--profile', 'nope'], {}))).toMatch(/profile "nope" .*not found/);
      mkdirSync(join(dir, 'config/schemas'), { recursive: true });
      writeFileSync(join(dir, 'config/production.json'), JSON.stringify({ server: { port: 7811 } }));
      const own = loadConfig(['--profile', 'production'], {});
      expect([own.server.port, own.adapters.buffer, own.schemasDir]).toEqual([7811, 'sqlite', './config/schemas']);
    } finally {
      process.chdir(before);
      removeDir(dir);
    }
  });

  it('layers --config FILE on the profile: nested objects merge, values replace; environment and flags still win', () => {
    const dir = mkdtempSync(join(tmpdir(), 'memgate-layer-'));
    try {
      const file = join(dir, 'mine.json');
      writeFileSync(file, JSON.stringify({ adapters: { embedder: 'offline' }, server: { port: 7012 }, redis: { keyPrefix: 'mine:' } }));
      const c = load(['--profile', 'loopback', '--config', file]);
      // From loopback.json: the stack and its servers; from the file: what it names.
      expect([c.profile, c.adapters.buffer, c.adapters.bus, c.server.inlineWorkers, c.redis.url]).toEqual(['loopback', 'redis', 'nats', false, 'redis://127.0.0.1:6390']);
      expect([c.adapters.embedder, c.server.port, c.redis.keyPrefix]).toEqual(['offline', 7012, 'mine:']);
      expect(load(['--profile', 'loopback', '--config', file, '--port', '7013'], { MEMGATE_EMBEDDER: 'fused' }).server.port).toBe(7013);
      expect(load(['--profile', 'loopback', '--config', file], { MEMGATE_EMBEDDER: 'fused' }).adapters.embedder).toBe('fused');
      // On the embedded default, the embedded profile is the base.
      const embedded = load(['--config', file]);
      expect([embedded.adapters.buffer, embedded.adapters.embedder, embedded.sqlite.path]).toEqual(['sqlite', 'offline', './data/memgate.db']);
      expect(messageOf(() => load(['--config', join(dir, 'missing.json')]))).toMatch(/config file .*missing\.json not found/);
      writeFileSync(join(dir, 'list.json'), '[1, 2]');
      expect(messageOf(() => load(['--config', join(dir, 'list.json')]))).toMatch(/list\.json is not valid JSON/);
    } finally {
      removeDir(dir);
    }
  });

  it('names the environment variable or flag a bad value came from (a bad flag value is a usage error)', () => {
    expect(() => load(['--port', 'abc'])).toThrow(UsageError);
    expect(() => load([], { MEMGATE_PORT: 'abc' })).not.toThrow(UsageError);
    expect(messageOf(() => load([], { MEMGATE_PORT: 'abc' }))).toMatch(/MEMGATE_PORT="abc".*server\.port/);
    expect(messageOf(() => load(['--port', '99999']))).toMatch(/--port "99999".*server\.port/);
    expect(messageOf(() => load([], { MEMGATE_EXTRACTOR: 'gpt' }))).toMatch(/MEMGATE_EXTRACTOR="gpt"/);
    expect(messageOf(() => load(['--log-level', 'loud']))).toMatch(/--log-level "loud"/);
  });

  it('sets the wait and warm share of search by meaning by environment, within their bounds', () => {
    expect(load([]).memory).toMatchObject({ meaningWaitMs: 30, meaningWarmShare: 0.1 });
    expect(load([], { MEMGATE_MEANING_WAIT_MS: '15', MEMGATE_MEANING_WARM_SHARE: '0' }).memory).toMatchObject({ meaningWaitMs: 15, meaningWarmShare: 0 });
    expect(messageOf(() => load([], { MEMGATE_MEANING_WARM_SHARE: '2' }))).toMatch(/MEMGATE_MEANING_WARM_SHARE="2".*memory\.meaningWarmShare/);
  });

  it('switches extractor and embedder by environment', () => {
    const c = load([], { MEMGATE_EXTRACTOR: 'openai', MEMGATE_EMBEDDER: 'openai', MEMGATE_LLM_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(c.adapters.extractor).toBe('openai');
    expect(c.adapters.embedder).toBe('openai');
    expect(c.llm.baseURL).toBe('http://127.0.0.1:9/v1');
  });

  it('switches among the embedders, with a clear error for any other value and a wrong size', () => {
    for (const name of ['offline', 'use-lite', 'fused', 'static', 'static-fused', 'openai']) expect(load([], { MEMGATE_EMBEDDER: name }).adapters.embedder).toBe(name);
    // The embedded profile (what npm start loads) embeds with the product default, fused.
    expect(load([]).adapters.embedder).toBe('fused');
    expect(embedderDimensions(load([]))).toBe(896);
    expect(embedderDimensions(load([], { MEMGATE_EMBEDDER: 'offline' }))).toBe(384);
    expect(embedderDimensions(load([], { MEMGATE_EMBEDDER: 'use-lite' }))).toBe(512);
    expect(embedderDimensions(load([], { MEMGATE_EMBEDDER: 'fused' }))).toBe(896);
    expect(embedderDimensions(load([], { MEMGATE_EMBEDDER: 'openai', MEMGATE_EMBEDDINGS_DIMENSIONS: '1536' }))).toBe(1536);
    expect(embedderDimensions(load([], { MEMGATE_EMBEDDER: 'use-lite', MEMGATE_EMBEDDINGS_DIMENSIONS: '512' }))).toBe(512);
    expect(messageOf(() => load([], { MEMGATE_EMBEDDER: 'minilm' }))).toMatch(/MEMGATE_EMBEDDER="minilm".*adapters\.embedder: expected one of offline, use-lite, fused, static, static-fused, openai/);
    expect(messageOf(() => load([], { MEMGATE_EMBEDDER: 'use-lite', MEMGATE_EMBEDDINGS_DIMENSIONS: '384' }))).toMatch(
      /MEMGATE_EMBEDDINGS_DIMENSIONS="384".*use-lite embedder makes 512-d vectors.*leave embeddings\.dimensions/,
    );
    expect(messageOf(() => load([], { MEMGATE_EMBEDDER: 'fused', MEMGATE_EMBEDDINGS_DIMENSIONS: '512' }))).toMatch(/fused embedder makes 896-d/);
    expect(load([]).embeddings.modelThread).toBe(true);
    expect(load([], { MEMGATE_EMBEDDINGS_MODEL_THREAD: 'false' }).embeddings.modelThread).toBe(false);
    expect(load([]).embeddings.encoderRuntime).toBe('int8');
    expect(load([], { MEMGATE_EMBEDDINGS_ENCODER_RUNTIME: 'tfjs' }).embeddings.encoderRuntime).toBe('tfjs');
    expect(messageOf(() => load([], { MEMGATE_EMBEDDINGS_ENCODER_RUNTIME: 'onnx' }))).toMatch(/encoderRuntime/);
    const env = { MEMGATE_EMBEDDER: 'use-lite', MEMGATE_EMBEDDINGS_BASE_URL: 'http://127.0.0.1:9/v1' };
    expect(configNotices(load([], env), env)).toEqual([expect.stringMatching(/embedder is use-lite; set MEMGATE_EMBEDDER=openai/)]);
  });

  it('says when an LLM endpoint is configured but the offline extractor ignores it', () => {
    const env = { MEMGATE_LLM_BASE_URL: 'http://127.0.0.1:9/v1' };
    expect(configNotices(load([], env), env)).toEqual([expect.stringMatching(/MEMGATE_EXTRACTOR=openai/)]);
    const on = { ...env, MEMGATE_EXTRACTOR: 'openai' };
    expect(configNotices(load([], on), on)).toEqual([]);
  });

  it('refuses open mode on the production profile or a public address unless asked for', () => {
    expect(messageOf(() => assertServeSafe(load(['--profile', 'production'])))).toMatch(/MEMGATE_API_KEYS.*MEMGATE_ALLOW_OPEN/);
    expect(messageOf(() => assertServeSafe(load(['--host', '0.0.0.0'])))).toMatch(/host 0\.0\.0\.0/);
    expect(messageOf(() => assertServeSafe(load(['--host', '0.0.0.0', '--allow-open'])))).toBe('no error');
    expect(messageOf(() => assertServeSafe(load(['--profile', 'production'], { MEMGATE_ALLOW_OPEN: 'true' })))).toBe('no error');
    expect(messageOf(() => assertServeSafe(load(['--profile', 'production'], { MEMGATE_API_KEYS: 'k1:acme' })))).toBe('no error');
    expect(messageOf(() => assertServeSafe(load([])))).toBe('no error');
  });
});
