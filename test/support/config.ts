import { defaultConfig, type Config } from '../../src/config/config-schema.ts';

/**
 * The embedder tests run on unless they choose one. Tests check memory semantics, wiring and
 * faults, which no embedder changes; the hashing embedder keeps them fast and deterministic.
 * The sentence-encoder embedders have their own suites (test/adapters/embedders.test.ts,
 * test/app/embedder-wiring.test.ts) and the packed-package test runs the true default.
 */
export const TEST_EMBEDDER = 'offline';

/** `defaultConfig` with the test embedder unless `overrides.adapters.embedder` says otherwise. */
export function testConfig(overrides: Record<string, unknown> = {}): Config {
  return defaultConfig({ ...overrides, adapters: { embedder: TEST_EMBEDDER, ...(overrides['adapters'] as object | undefined) } });
}

/** What `npm start` embeds with here: MEMGATE_EMBEDDER, else the product default (for runs that report on the default). */
export function productEmbedder(): string {
  return process.env['MEMGATE_EMBEDDER'] ?? defaultConfig().adapters.embedder;
}
