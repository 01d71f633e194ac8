import { describe, expect, it } from 'vitest';
import type { Lease, UserLock } from '../../src/ports/user-lock.ts';
import { rid } from '../support/fixtures.ts';
import { useSubject, type ContractOptions } from '../support/subject.ts';
import { waitFor } from '../support/wait.ts';

const LONG_TTL_MS = 30_000;

/** The UserLock contract: exclusivity, fencing tokens, TTL expiry and takeover, release. */
export function userLockContract(name: string, make: () => Promise<UserLock>, opts: ContractOptions<UserLock> = {}): void {
  describe(`UserLock contract: ${name}`, () => {
    const lock = useSubject(make, opts);
    const key = () => rid('lock-test/');

    it('is exclusive per key while held, and keys are independent', async () => {
      const k = key();
      const a = await lock().acquire(k, LONG_TTL_MS);
      expect(a).not.toBeNull();
      expect(a!.key).toBe(k);
      expect(await a!.isHeld()).toBe(true);
      expect(await lock().acquire(k, LONG_TTL_MS)).toBeNull();
      const other = await lock().acquire(key(), LONG_TTL_MS);
      expect(other).not.toBeNull();
      expect(await a!.isHeld()).toBe(true);
    });

    it('lets exactly one of many concurrent acquirers win', async () => {
      const k = key();
      const leases = await Promise.all(Array.from({ length: 10 }, () => lock().acquire(k, LONG_TTL_MS)));
      expect(leases.filter((l) => l !== null)).toHaveLength(1);
    });

    it('release frees the key; the lease is no longer held; releasing twice is harmless', async () => {
      const k = key();
      const a = (await lock().acquire(k, LONG_TTL_MS))!;
      await a.release();
      expect(await a.isHeld()).toBe(false);
      await a.release();
      const b = await lock().acquire(k, LONG_TTL_MS);
      expect(b).not.toBeNull();
      expect(await b!.isHeld()).toBe(true);
    });

    it('renew keeps a short lease held past its TTL; a lost lease cannot be renewed', async () => {
      const k = key();
      const a = (await lock().acquire(k, 400))!;
      for (let i = 0; i < 4; i++) {
        await new Promise((r) => setTimeout(r, 200));
        expect(await a.renew(400)).toBe(true);
      }
      expect(await a.isHeld()).toBe(true);
      expect(await lock().acquire(k, LONG_TTL_MS)).toBeNull();
      await a.release();
      expect(await a.renew(400)).toBe(false);
      const b = (await lock().acquire(k, LONG_TTL_MS))!;
      expect(await a.renew(LONG_TTL_MS)).toBe(false);
      expect(await b.isHeld()).toBe(true);
    });

    it('hands out strictly increasing fencing tokens per key', async () => {
      const k = key();
      const tokens: number[] = [];
      for (let i = 0; i < 5; i++) {
        const lease = (await lock().acquire(k, LONG_TTL_MS))!;
        tokens.push(lease.token);
        await lease.release();
      }
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
    });

    it('expires after the TTL: another worker takes over with a larger token, the old lease is not held', async () => {
      const k = key();
      const a = (await lock().acquire(k, 300))!;
      let b: Lease | null = null;
      await waitFor(async () => (b = await lock().acquire(k, LONG_TTL_MS)) !== null, 10_000, 'takeover after expiry');
      const taken = b as unknown as Lease;
      expect(taken.token).toBeGreaterThan(a.token);
      expect(await a.isHeld()).toBe(false);
      expect(await taken.isHeld()).toBe(true);
      await a.release();
      expect(await taken.isHeld()).toBe(true);
      expect(await lock().acquire(k, LONG_TTL_MS)).toBeNull();
    });
  });
}
