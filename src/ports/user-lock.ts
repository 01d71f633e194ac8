/** A held per-user lock. `token` is a fencing token: strictly increasing per key across holders. */
export interface Lease {
  readonly key: string;
  readonly token: number;
  /** True while the lease has not expired or been taken over. */
  isHeld(): Promise<boolean>;
  /** Extend a lease still held to `ttlMs` from now; false when it was lost. */
  renew(ttlMs: number): Promise<boolean>;
  release(): Promise<void>;
}

/** Per-user distributed lock so two workers never extract the same user at once. */
export interface UserLock {
  /** Try once; null when someone else holds it. */
  acquire(key: string, ttlMs: number): Promise<Lease | null>;
  close(): Promise<void>;
}
