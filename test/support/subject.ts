import { afterEach, beforeEach } from 'vitest';

/** Options every contract suite accepts. */
export interface ContractOptions<T> {
  /** Runs after each test, before `close()` (e.g. drop a server-side namespace). */
  cleanup?: (subject: T) => Promise<void>;
}

/**
 * A fresh adapter per test from `make`, cleaned up and closed after it.
 * Returns an accessor to call inside the test body.
 */
export function useSubject<T extends { close(): Promise<void> }>(make: () => Promise<T>, options: ContractOptions<T> = {}): () => T {
  let subject: T | undefined;
  beforeEach(async () => {
    subject = await make();
  });
  afterEach(async () => {
    const current = subject;
    subject = undefined;
    if (!current) return;
    try {
      await options.cleanup?.(current);
    } finally {
      await current.close();
    }
  });
  return () => {
    if (!subject) throw new Error('contract subject used outside a test');
    return subject;
  };
}
