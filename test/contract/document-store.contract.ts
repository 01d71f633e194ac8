import { describe, expect, it } from 'vitest';
import type { ExtractionSchema } from '../../src/core/extraction-schema.ts';
import type { DocumentStore } from '../../src/ports/document-store.ts';
import { makeHotDoc, randomScope, rid, sibling } from '../support/fixtures.ts';
import { useSubject, type ContractOptions } from '../support/subject.ts';

const SCHEMA: ExtractionSchema = {
  fields: [
    { name: 'full_name', category: 'profile', type: 'string', description: 'The caller’s full name' },
    { name: 'budget', category: 'temporal', type: 'money', description: 'Budget', hints: ['budget', 'approved for'] },
    { name: 'site_visit', category: 'ephemeral', type: 'datetime', description: 'Visit', ttlHours: 24 },
    { name: 'status', category: 'temporal', type: 'enum', description: 'Status', values: ['open', 'closed'], keyBy: 'address' },
  ],
};

/** The DocumentStore contract: versioned compare-and-set commits of hot documents, and agent schemas. */
export function documentStoreContract(name: string, make: () => Promise<DocumentStore>, opts: ContractOptions<DocumentStore> = {}): void {
  describe(`DocumentStore contract: ${name}`, () => {
    const store = useSubject(make, opts);

    it('has no hot document before the first commit', async () => {
      expect(await store().getHot(randomScope())).toBeNull();
    });

    it('creates with expectedVersion 0 and reads the document back unchanged', async () => {
      const scope = randomScope();
      const doc = makeHotDoc(scope, 1);
      expect(await store().commitHot(doc, 0)).toBe(true);
      expect(await store().getHot(scope)).toEqual(doc);
    });

    it('keeps the ACUs waiting for the full embedder, and drops them when a commit leaves them out', async () => {
      const scope = randomScope();
      const deferredAcus = [
        { id: rid(), text: 'Rajiv budget is 50 lakhs.', turnRefs: ['t1'], sessionId: 'call-1', validAt: '2026-01-05T10:00:00.000Z', createdAt: '2026-01-05T10:01:00.000Z', contentHash: 'h1' },
      ];
      const doc = { ...makeHotDoc(scope, 1), deferredAcus };
      expect(await store().commitHot(doc, 0)).toBe(true);
      expect(await store().getHot(scope)).toEqual(doc);
      expect(await store().commitHot(makeHotDoc(scope, 2), 1)).toBe(true);
      expect((await store().getHot(scope))?.deferredAcus).toBeUndefined();
    });

    it('refuses a second create (someone else committed version 1 first)', async () => {
      const scope = randomScope();
      expect(await store().commitHot(makeHotDoc(scope, 1, 'first'), 0)).toBe(true);
      expect(await store().commitHot(makeHotDoc(scope, 1, 'second'), 0)).toBe(false);
      expect((await store().getHot(scope))?.profile['city']?.value).toBe('Bengaluru first');
    });

    it('advances version by version, and a stale writer cannot overwrite a newer commit', async () => {
      const scope = randomScope();
      await store().commitHot(makeHotDoc(scope, 1), 0);
      const v2 = makeHotDoc(scope, 2, 'fresh');
      expect(await store().commitHot(v2, 1)).toBe(true);
      expect(await store().commitHot(makeHotDoc(scope, 2, 'stale'), 1)).toBe(false);
      expect(await store().commitHot(makeHotDoc(scope, 5, 'ahead'), 4)).toBe(false);
      expect(await store().getHot(scope)).toEqual(v2);
      expect(await store().commitHot(makeHotDoc(scope, 3), 2)).toBe(true);
      expect((await store().getHot(scope))?.version).toBe(3);
    });

    it('cannot update a document that does not exist', async () => {
      const scope = randomScope();
      expect(await store().commitHot(makeHotDoc(scope, 4), 3)).toBe(false);
      expect(await store().getHot(scope)).toBeNull();
    });

    it('rejects a document whose version is not expectedVersion + 1', async () => {
      const scope = randomScope();
      await expect(store().commitHot(makeHotDoc(scope, 3), 0)).rejects.toThrow();
      expect(await store().getHot(scope)).toBeNull();
    });

    it('lets exactly one of two racing commits of the same version win', async () => {
      const scope = randomScope();
      await store().commitHot(makeHotDoc(scope, 1), 0);
      const results = await Promise.all([store().commitHot(makeHotDoc(scope, 2, 'w1'), 1), store().commitHot(makeHotDoc(scope, 2, 'w2'), 1)]);
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results[0] ? 'w1' : 'w2';
      expect((await store().getHot(scope))?.profile['city']?.value).toBe(`Bengaluru ${winner}`);
    });

    it('forgets one user only', async () => {
      const a = randomScope();
      const b = sibling(a);
      await store().commitHot(makeHotDoc(a, 1), 0);
      await store().commitHot(makeHotDoc(b, 1), 0);
      await store().forget(a);
      expect(await store().getHot(a)).toBeNull();
      expect(await store().getHot(b)).not.toBeNull();
      expect(await store().commitHot(makeHotDoc(a, 1), 0)).toBe(true);
    });

    it('stores schemas per tenant and agent, replaces them, and keeps them across a user forget', async () => {
      const scope = randomScope();
      const other = rid('a-');
      expect(await store().getSchema(scope.tenantId, scope.agentId)).toBeNull();
      await store().putSchema(scope.tenantId, scope.agentId, SCHEMA);
      expect(await store().getSchema(scope.tenantId, scope.agentId)).toEqual(SCHEMA);
      expect(await store().getSchema(scope.tenantId, other)).toBeNull();
      expect(await store().getSchema(rid('t-'), scope.agentId)).toBeNull();
      const smaller: ExtractionSchema = { fields: [SCHEMA.fields[0]!] };
      await store().putSchema(scope.tenantId, scope.agentId, smaller);
      expect(await store().getSchema(scope.tenantId, scope.agentId)).toEqual(smaller);
      await store().forget(scope);
      expect(await store().getSchema(scope.tenantId, scope.agentId)).toEqual(smaller);
    });
  });
}
