import { describe, it } from 'vitest';

/** Servers an adapter suite may need; each is found through one environment variable. */
export type ServerKind = 'redis' | 'nats' | 'mongo' | 'qdrant';

interface ServerSpec {
  env: string;
  label: string;
  /** CI installs it (scripts/test-servers.sh): a missing URL there is a failure, not a skip. */
  requiredInCi: boolean;
}

const SPECS: Record<ServerKind, ServerSpec> = {
  redis: { env: 'MEMGATE_TEST_REDIS_URL', label: 'Redis', requiredInCi: true },
  nats: { env: 'MEMGATE_TEST_NATS_URL', label: 'NATS', requiredInCi: true },
  // Neither can be installed on the CI machines (NOTES.md): always a visible skip when unset.
  mongo: { env: 'MEMGATE_TEST_MONGO_URL', label: 'MongoDB', requiredInCi: false },
  qdrant: { env: 'MEMGATE_TEST_QDRANT_URL', label: 'Qdrant', requiredInCi: false },
};

const announced = new Set<ServerKind>();

/** The test server URL for `kind`, or undefined when its variable is unset or empty. */
export function serverUrl(kind: ServerKind): string | undefined {
  const value = process.env[SPECS[kind].env]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** MEMGATE_TEST_REDIS_URL, e.g. redis://127.0.0.1:6390. */
export function redisUrl(): string | undefined {
  return serverUrl('redis');
}

/** MEMGATE_TEST_NATS_URL, e.g. nats://127.0.0.1:4233. */
export function natsUrl(): string | undefined {
  return serverUrl('nats');
}

/** MEMGATE_TEST_MONGO_URL. */
export function mongoUrl(): string | undefined {
  return serverUrl('mongo');
}

/** MEMGATE_TEST_QDRANT_URL. */
export function qdrantUrl(): string | undefined {
  return serverUrl('qdrant');
}

/** True when the run must fail rather than skip because `kind` is missing (CI and a server CI installs). */
export function serverRequired(kind: ServerKind): boolean {
  const ci = process.env['CI'];
  return SPECS[kind].requiredInCi && ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}

/**
 * `describe(name, () => fn(url))` when the server's URL is set. Otherwise one
 * "SKIPPED: …" line on stderr and a skipped suite whose title says why; in CI a
 * missing Redis or NATS URL is a failing test instead (a silent skip would hide
 * that the production adapters went untested).
 */
export function describeWithServer(kind: ServerKind, name: string, fn: (url: string) => void): void {
  const url = serverUrl(kind);
  if (url !== undefined) {
    describe(name, () => fn(url));
    return;
  }
  const { env, label } = SPECS[kind];
  if (serverRequired(kind)) {
    describe(name, () => {
      it(`requires ${env}`, () => {
        throw new Error(`${env} is not set, but CI requires a real ${label}: run \`eval "$(bash scripts/test-servers.sh start)"\` first`);
      });
    });
    return;
  }
  if (!announced.has(kind)) {
    announced.add(kind);
    process.stderr.write(`SKIPPED: ${label} adapter suites (set ${env})\n`);
  }
  describe.skip(`${name} (skipped: set ${env} to run against a real ${label})`, () => {
    it(`needs ${env}`, () => undefined);
  });
}
