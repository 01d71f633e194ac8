/**
 * The end of a multi-process run on the shared Redis and NATS test servers:
 * other suites (and other runs) use the same servers, so a run removes exactly
 * what it created, its job stream and the Redis keys under its own prefix.
 */
import type { NatsConnection } from 'nats';
import type { Redis } from 'ioredis';
import type { JetStreamJobBus } from '../../../src/adapters/nats/index.ts';

/** The run's connections; any of them may be missing when start-up failed half way. */
export interface RunConnections {
  redis?: Redis | undefined;
  nc?: NatsConnection | undefined;
  bus?: JetStreamJobBus | undefined;
}

/** Deletes the run's stream and its Redis keys under `redisPrefix`, then closes the connections. */
export async function dropRunData({ redis, nc, bus }: RunConnections, redisPrefix: string): Promise<void> {
  if (bus) {
    await bus.dangerouslyDeleteAll().catch(() => undefined);
    await bus.close();
  }
  await nc?.close();
  if (!redis) return;
  for (let cursor = '0'; ;) {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    if ((cursor = next) === '0') break;
  }
  await redis.quit();
}
