import { createHash } from 'node:crypto';

/** Tenant of every request in open dev mode (no keys configured). */
export const DEV_TENANT = 'default';

/** A configured API key: the sha256 hex of the raw key, and its tenant. */
export interface ApiKeyEntry {
  readonly sha256: string;
  readonly tenantId: string;
}

/** Resolves a presented API key to its tenant. Raw keys are never kept: only their hashes. */
export interface Authenticator {
  /** True when no keys are configured: every request is tenant `default`. */
  readonly open: boolean;
  /** The key's tenant, or null when the key is missing or unknown (always `default` in open mode). */
  tenantOf(key: string | null): string | null;
}

/** Build the authenticator from `config.auth.keys`. */
export function createAuthenticator(keys: readonly ApiKeyEntry[]): Authenticator {
  const byHash = new Map<string, string>();
  for (const k of keys) byHash.set(k.sha256.toLowerCase(), k.tenantId);
  const open = byHash.size === 0;
  return {
    open,
    tenantOf(key) {
      if (open) return DEV_TENANT;
      if (!key) return null;
      // Comparing digests (not raw keys) gives the lookup no timing signal about the key.
      return byHash.get(createHash('sha256').update(key).digest('hex')) ?? null;
    },
  };
}

/** The key of an `Authorization: Bearer KEY` header value, or null. */
export function bearerToken(header: string): string | null {
  if (header.length < 8 || header.slice(0, 7).toLowerCase() !== 'bearer ') return null;
  const key = header.slice(7).trim();
  return key.length > 0 ? key : null;
}
