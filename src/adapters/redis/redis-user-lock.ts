import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Lease, UserLock } from '../../ports/user-lock.ts';
import { guarded } from './create-redis.ts';
import { lockKeys } from './keys.ts';
import { ACQUIRE_LOCK, bindScript, RELEASE_LOCK, RENEW_LOCK, type BoundScript } from './scripts.ts';

/** Options of {@link RedisUserLock}. */
export interface RedisUserLockOptions {
  /** Quit the connection on `close()` (true when the lock owns it). */
  closeConnection?: boolean;
}

/**
 * Single-instance Redis lock (SET NX PX + random holder value) with a fencing
 * token INCRed atomically with the acquisition. The token, not the lock, is what
 * protects a commit: the document store's version check rejects a worker whose
 * lease expired while it was still working. The fence counter never expires, so
 * tokens stay strictly increasing per key (one small key per user).
 */
export class RedisUserLock implements UserLock {
  private readonly prefix: string;
  private readonly closeConnection: boolean;
  private readonly acquireScript: BoundScript;
  private readonly releaseScript: BoundScript;
  private readonly renewScript: BoundScript;

  /** `keyPrefix`: prefix of every key (config `redis.keyPrefix`). The connection stays the caller's unless `closeConnection`. */
  constructor(
    private readonly redis: Redis,
    keyPrefix = 'mg:',
    options: RedisUserLockOptions = {},
  ) {
    this.prefix = keyPrefix;
    this.closeConnection = options.closeConnection ?? false;
    this.acquireScript = bindScript(redis, 'memgateAcquireLock', ACQUIRE_LOCK, 2);
    this.releaseScript = bindScript(redis, 'memgateReleaseLock', RELEASE_LOCK, 1);
    this.renewScript = bindScript(redis, 'memgateRenewLock', RENEW_LOCK, 1);
  }

  async acquire(key: string, ttlMs: number): Promise<Lease | null> {
    const keys = lockKeys(this.prefix, key);
    const holder = randomBytes(16).toString('hex');
    const token = await guarded('lock.acquire', this.acquireScript([keys.lock, keys.fence], [holder, Math.max(1, Math.ceil(ttlMs))]));
    if (token === null) return null;
    const redis = this.redis;
    const release = this.releaseScript;
    const renew = this.renewScript;
    return {
      key,
      token: Number(token),
      isHeld: async () => (await guarded('lock.isHeld', redis.get(keys.lock))) === holder,
      renew: async (ms: number) => Number(await guarded('lock.renew', renew([keys.lock], [holder, Math.max(1, Math.ceil(ms))]))) === 1,
      release: async () => {
        await guarded('lock.release', release([keys.lock], [holder]));
      },
    };
  }

  async close(): Promise<void> {
    if (this.closeConnection && this.redis.status !== 'end') await this.redis.quit();
  }
}
