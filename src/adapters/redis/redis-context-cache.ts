import type { Redis } from 'ioredis';
import type { Scope } from '../../core/types.ts';
import type { ContextCache } from '../../ports/context-cache.ts';
import { guarded } from './create-redis.ts';
import { userKeys } from './keys.ts';

/** Options of {@link RedisContextCache}. */
export interface RedisContextCacheOptions {
  /** Entries expire after this long (0 = never). Derived data: a miss only costs one document read. Default 7 days. */
  ttlMs?: number;
  /** Quit the connection on `close()` (true when the cache owns it). */
  closeConnection?: boolean;
}

const DEFAULT_TTL_MS = 7 * 24 * 3_600_000;

/**
 * ContextCache on Redis: one value per agent+user (the bytes the service
 * encoded), so session start is exactly one GET and no decode. Holds
 * derived data only, so it tolerates eviction (`volatile-*` maxmemory policies
 * may drop it; the buffer's keys have no TTL).
 */
export class RedisContextCache implements ContextCache {
  private readonly prefix: string;
  private readonly ttlMs: number;
  private readonly closeConnection: boolean;

  /** `keyPrefix`: prefix of every key (config `redis.keyPrefix`). The connection stays the caller's unless `closeConnection`. */
  constructor(
    private readonly redis: Redis,
    keyPrefix = 'mg:',
    options: RedisContextCacheOptions = {},
  ) {
    this.prefix = keyPrefix;
    this.ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    this.closeConnection = options.closeConnection ?? false;
  }

  async get(scope: Scope): Promise<Uint8Array | null> {
    return guarded('cache.get', this.redis.getBuffer(this.key(scope)));
  }

  async set(scope: Scope, bytes: Uint8Array): Promise<void> {
    const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const key = this.key(scope);
    await guarded('cache.set', this.ttlMs > 0 ? this.redis.set(key, data, 'PX', this.ttlMs) : this.redis.set(key, data));
  }

  async delete(scope: Scope): Promise<void> {
    await guarded('cache.delete', this.redis.del(this.key(scope)));
  }

  async close(): Promise<void> {
    if (this.closeConnection && this.redis.status !== 'end') await this.redis.quit();
  }

  private key(scope: Scope): string {
    return userKeys(this.prefix, scope).context;
  }
}
