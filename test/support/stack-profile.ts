import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Writes `dir/profile.json`: config/loopback.json's stack (Redis turn buffer, cache
 * and lock, NATS jobs and events, SQLite documents, no inline workers) with the
 * extractor a test needs, plus its own sections (timings, memory knobs). A
 * `--config` file replaces the profile file rather than layering on it, so the
 * adapters are all spelled out. Returns the path for `--config`.
 */
export function writeRedisNatsProfile(dir: string, extractor: 'offline' | 'openai', sections: Record<string, unknown> = {}): string {
  const file = join(dir, 'profile.json');
  const adapters = { buffer: 'redis', cache: 'redis', lock: 'redis', bus: 'nats', events: 'nats', documents: 'sqlite', cold: 'sqlite', acus: 'sqlite', extractor, embedder: 'offline' };
  writeFileSync(file, JSON.stringify({ adapters, server: { inlineWorkers: false }, ...sections }));
  return file;
}
