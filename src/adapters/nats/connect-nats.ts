import { connect, type ConnectionOptions, type NatsConnection } from 'nats';
import { MemgateError } from '../../core/errors.ts';

/**
 * Connects to NATS (config `nats.servers`: one URL or a comma-separated list).
 * Reconnects forever: a gateway or worker should ride out a NATS restart, not exit.
 */
export async function connectNats(servers: string, options: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
  const list = servers
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  try {
    return await connect({ servers: list, name: 'memgate', maxReconnectAttempts: -1, ...options });
  } catch (err) {
    throw new MemgateError('unavailable', `cannot connect to NATS at ${list.join(', ')}`, { cause: err });
  }
}

/** Rethrows a NATS failure as a retryable `unavailable` MemgateError (cause kept). */
export function natsFailure(op: string, err: unknown): MemgateError {
  if (err instanceof MemgateError) return err;
  return new MemgateError('unavailable', `nats ${op} failed`, { cause: err });
}
