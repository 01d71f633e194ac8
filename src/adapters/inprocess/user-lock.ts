import { systemClock, type Clock } from '../../core/clock.ts';
import type { Lease, UserLock } from '../../ports/user-lock.ts';

interface Holder {
  token: number;
  expiresAt: number;
}

/**
 * The embedded per-user lock: a map of holders with TTL expiry. Fencing tokens
 * are strictly increasing per key for the life of the process (they survive
 * release and expiry), so a stale holder can always be told apart.
 */
export class InProcessUserLock implements UserLock {
  private readonly holders = new Map<string, Holder>();
  private readonly lastToken = new Map<string, number>();

  /** `clock` lets tests expire leases without sleeping. */
  constructor(private readonly clock: Clock = systemClock) {}

  async acquire(key: string, ttlMs: number): Promise<Lease | null> {
    const now = this.clock.now();
    const current = this.holders.get(key);
    if (current && current.expiresAt > now) return null;
    const token = (this.lastToken.get(key) ?? 0) + 1;
    this.lastToken.set(key, token);
    this.holders.set(key, { token, expiresAt: now + ttlMs });
    return {
      key,
      token,
      isHeld: async () => this.holds(key, token),
      renew: async (ms: number) => {
        if (!this.holds(key, token)) return false;
        this.holders.set(key, { token, expiresAt: this.clock.now() + ms });
        return true;
      },
      release: async () => {
        if (this.holders.get(key)?.token === token) this.holders.delete(key);
      },
    };
  }

  async close(): Promise<void> {
    this.holders.clear();
  }

  private holds(key: string, token: number): boolean {
    const current = this.holders.get(key);
    return current !== undefined && current.token === token && current.expiresAt > this.clock.now();
  }
}
