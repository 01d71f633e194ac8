import { describe, expect, it } from 'vitest';
import type { ContextCache } from '../../src/ports/context-cache.ts';
import { decodeContext, packContext, unpackContext } from '../../src/memory/encoded-context.ts';
import type { EncodedContext, SessionContext } from '../../src/core/types.ts';
import { makeSessionContext, randomScope, sibling } from '../support/fixtures.ts';
import { useSubject, type ContractOptions } from '../support/subject.ts';

/** The ContextCache contract: per-user get/set/delete of the bytes the memory layer encodes (a pre-serialised context). */
export function contextCacheContract(name: string, make: () => Promise<ContextCache>, opts: ContractOptions<ContextCache> = {}): void {
  describe(`ContextCache contract: ${name}`, () => {
    const cache = useSubject(make, opts);
    const set = (scope: Parameters<ContextCache['set']>[0], ctx: SessionContext) => cache().set(scope, packContext(ctx));
    const get = async (scope: Parameters<ContextCache['get']>[0]): Promise<EncodedContext | null> => {
      const bytes = await cache().get(scope);
      return bytes === null ? null : unpackContext(bytes);
    };

    it('misses before the first set', async () => {
      expect(await get(randomScope())).toBeNull();
    });

    it('returns exactly what was set (nested values, unicode, numbers, booleans, nulls)', async () => {
      const scope = randomScope();
      const ctx = makeSessionContext({ expiresAt: 1_772_445_600_000 });
      await set(scope, ctx);
      const stored = (await get(scope))!;
      expect(decodeContext(stored)).toEqual(ctx);
      // The reply fields are one JSON object a session start can splice without parsing.
      expect(Buffer.from(stored.json).toString('utf8')).toBe(
        JSON.stringify({ profile: ctx.profile, facts: ctx.facts, possibly: ctx.possibly, recent: ctx.recent, summaries: ctx.summaries, contextBlock: ctx.contextBlock, tools: ctx.tools }),
      );
    });

    it('overwrites on a second set', async () => {
      const scope = randomScope();
      await set(scope, makeSessionContext({ version: 1 }));
      const newer = makeSessionContext({ version: 2, contextBlock: 'newer block' });
      await set(scope, newer);
      expect(decodeContext((await get(scope))!)).toEqual(newer);
    });

    it('deletes, and deleting a missing entry is fine', async () => {
      const scope = randomScope();
      await set(scope, makeSessionContext());
      await cache().delete(scope);
      expect(await get(scope)).toBeNull();
      await expect(cache().delete(scope)).resolves.toBeUndefined();
    });

    it('isolates users, agents and tenants (including ids with separators)', async () => {
      const a = randomScope({ userId: 'u:1/x' });
      const scopes = [
        a,
        sibling(a, 'u:1/y'),
        { ...a, agentId: `${a.agentId}:other` },
        { ...randomScope(), agentId: a.agentId, userId: a.userId },
        { tenantId: `${a.tenantId}:${a.agentId}`, agentId: 'u', userId: '1/x' },
      ];
      for (const [i, s] of scopes.entries()) await set(s, makeSessionContext({ version: i + 1 }));
      for (const [i, s] of scopes.entries()) expect((await get(s))?.version).toBe(i + 1);
      await cache().delete(a);
      expect(await get(a)).toBeNull();
      for (const s of scopes.slice(1)) expect(await get(s)).not.toBeNull();
    });
  });
}
