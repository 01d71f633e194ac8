import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** memgate's version, from package.json (two levels up from both src/core and dist/core). */
export function memgateVersion(): string {
  cached ??= (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return cached;
}
