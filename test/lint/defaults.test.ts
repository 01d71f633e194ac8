/**
 * One source for every default: an adapter option that the config schema also sets falls back to
 * CONFIG_DEFAULTS, never to a literal of its own (a restated default drifts: the JetStream ack wait
 * was 30 s in the adapter and 10 s in the schema). The check reads every adapter source for
 * `<option> ?? <literal>` where <option> is a config key, and is shown to catch an injected one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_DEFAULTS } from '../../src/config/config-schema.ts';
import { REPO_ROOT } from '../support/processes.ts';

/** Every leaf key of the config (`ackWaitMs`, `appendDeadlineMs`, ...), nested objects walked. */
function configKeys(value: unknown, out = new Set<string>()): Set<string> {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (v && typeof v === 'object' && !Array.isArray(v)) configKeys(v, out);
      else out.add(k);
    }
  }
  return out;
}

const KEYS = configKeys(CONFIG_DEFAULTS);

/** `name ?? 123` / `name ?? 'x'` / `name ?? true` for a config key `name`, with the line it is on. */
export function restatedDefaults(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/\b(?:options|opts|o)\.(\w+)\s*\?\?\s*(-?[\d_.]+|'[^']*'|"[^"]*"|true|false)/g)) {
    if (KEYS.has(m[1]!)) found.push(`${m[1]} ?? ${m[2]}`);
  }
  return found;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []));
}

describe('one source for every default', () => {
  it('knows the config keys it guards', () => {
    expect(KEYS.has('ackWaitMs')).toBe(true);
    expect(KEYS.has('appendDeadlineMs')).toBe(true);
  });

  it('catches an adapter restating a config default', () => {
    expect(restatedDefaults('const ackWaitMs = options.ackWaitMs ?? 30_000;')).toEqual(['ackWaitMs ?? 30_000']);
    expect(restatedDefaults('this.appendDeadlineMs = options.appendDeadlineMs ?? CONFIG_DEFAULTS.redis.appendDeadlineMs;')).toEqual([]);
  });

  it('no adapter restates one', () => {
    const offenders = sources(join(REPO_ROOT, 'src/adapters')).flatMap((file) => restatedDefaults(readFileSync(file, 'utf8')).map((d) => `${relative(REPO_ROOT, file)}: ${d}`));
    expect(offenders).toEqual([]);
  });
});
