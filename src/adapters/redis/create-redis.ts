import { Redis, type RedisOptions } from 'ioredis';
import { MemgateError } from '../../core/errors.ts';

/** Options for {@link createRedis}: any ioredis option, plus defaults tuned for the call path. */
export type CreateRedisOptions = RedisOptions & {
  /** Connection errors while (re)connecting; without a listener ioredis prints each with its stack. At most one per 5 s. */
  onError?: (err: Error) => void;
};

/**
 * One ioredis connection with auto-pipelining on: concurrent appends from many
 * calls share one write per event-loop tick instead of one round trip each.
 * A command fails after a few reconnect attempts instead of hanging the ack.
 */
export function createRedis(url: string, options: CreateRedisOptions = {}): Redis {
  const { onError, ...redisOptions } = options;
  const redis = new Redis(url, {
    enableAutoPipelining: true,
    maxRetriesPerRequest: 3,
    connectTimeout: 5_000,
    connectionName: 'memgate',
    ...redisOptions,
  });
  let last = 0;
  redis.on('error', (err: Error) => {
    const now = Date.now();
    if (now - last < 5_000) return;
    last = now;
    onError?.(err);
  });
  return redis;
}

/** Rethrows a Redis failure as a retryable `unavailable` MemgateError (cause kept). */
export function redisFailure(op: string, err: unknown): MemgateError {
  if (err instanceof MemgateError) return err;
  return new MemgateError('unavailable', `redis ${op} failed`, { cause: err });
}

/** Awaits `work`, classifying any Redis error once, here at the adapter boundary. */
export async function guarded<T>(op: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw redisFailure(op, err);
  }
}

/** What {@link redisPersistence} found; `null` fields when the server hides CONFIG (managed Redis). */
export interface RedisPersistence {
  appendonly: string | null;
  appendfsync: string | null;
  /** True when acked turns survive a Redis process crash (AOF on). */
  durable: boolean | null;
}

/**
 * Reads the server's AOF settings so the composition root can warn at start-up
 * when the turn buffer would run without the persistence it requires.
 */
export async function redisPersistence(redis: Redis): Promise<RedisPersistence> {
  const read = async (name: string): Promise<string | null> => {
    try {
      const reply = (await redis.config('GET', name)) as unknown;
      const flat = Array.isArray(reply) ? reply : Object.entries(reply as Record<string, unknown>).flat();
      const value = flat[1];
      return typeof value === 'string' ? value : null;
    } catch {
      return null;
    }
  };
  const appendonly = await read('appendonly');
  const appendfsync = await read('appendfsync');
  return { appendonly, appendfsync, durable: appendonly === null ? null : appendonly === 'yes' };
}
