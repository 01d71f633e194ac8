/** The Redis adapters (turn buffer, context cache, user lock) and their connection factory. */
export { createRedis, redisPersistence, type CreateRedisOptions, type RedisPersistence } from './create-redis.ts';
export { RedisTurnBuffer, type RedisTurnBufferOptions } from './redis-turn-buffer.ts';
export { RedisContextCache, type RedisContextCacheOptions } from './redis-context-cache.ts';
export { RedisUserLock, type RedisUserLockOptions } from './redis-user-lock.ts';
