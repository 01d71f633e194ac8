import { afterEach, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/core/types.ts';
import type { CosineScale, Embedder } from '../../src/ports/embedder.ts';
import { createRuntime, type Runtime } from '../../src/app/wiring.ts';
import { MemoryService } from '../../src/service/memory-service.ts';
import { testConfig } from '../support/config.ts';

const SCALE: CosineScale = { meaning: true, floor: 0.2, strong: 0.4 };

/** Wraps the runtime's hashing embedder, recording what it embeds; `scale` makes it one that measures meaning. */
function recording(inner: Embedder, scale?: CosineScale): Embedder & { texts: string[] } {
  const texts: string[] = [];
  return {
    id: inner.id,
    dimensions: inner.dimensions,
    ...(scale ? { cosineScale: scale } : {}),
    texts,
    embed(batch) {
      texts.push(...batch);
      return inner.embed(batch);
    },
  };
}

const scope: Scope = { tenantId: 'default', agentId: 'warm-agent', userId: 'u1' };
const schema = { fields: [{ name: 'budget', category: 'temporal', type: 'money', description: 'Total budget' }] };

/** The append path queues each turn for the warm queue (after the ack), only for an embedder whose cosine measures meaning. */
describe('MemoryService: warming turn vectors', () => {
  let runtime: Runtime | null = null;
  afterEach(async () => {
    await runtime?.close();
    runtime = null;
  });

  async function service(scale: CosineScale | undefined, memory: Record<string, unknown> = {}) {
    runtime = await createRuntime(testConfig({ sqlite: { path: ':memory:' }, log: { level: 'silent' }, memory }));
    const embedder = recording(runtime.ports.embedder, scale);
    const svc = new MemoryService({ ...runtime.ports, embedder }, runtime.config, runtime.clock, runtime.logger);
    return { svc, embedder };
  }

  it('embeds appended turns and a put schema off the ack path, so a search embeds only its query', async () => {
    const { svc, embedder } = await service(SCALE);
    await svc.putSchema(scope.tenantId, scope.agentId, schema);
    const { sessionId } = await svc.startSession(scope);
    await svc.meaningIdle();
    expect(embedder.texts).toEqual(['budget: Total budget']);
    embedder.texts.length = 0;
    // SQLite acks synchronously: awaiting them runs microtasks only, and the warm queue starts on a later tick.
    await svc.appendTurn(scope, sessionId, { role: 'user', text: 'We can spend about eighty lakhs.' });
    await svc.appendTurn(scope, sessionId, { role: 'agent', text: 'Noted. Which area?' });
    expect(embedder.texts).toEqual([]);
    await svc.meaningIdle();
    // Newest first.
    expect(embedder.texts).toEqual(['Noted. Which area?', 'We can spend about eighty lakhs.']);
    embedder.texts.length = 0;
    await svc.search(scope, 'how much money do they have');
    expect(embedder.texts).toEqual(['how much money do they have']);
    svc.stopRetries();
  });

  it('warms nothing for a hashing embedder, nor with meaningWarmShare 0', async () => {
    for (const [scale, memory] of [
      [undefined, {}],
      [SCALE, { meaningWarmShare: 0 }],
    ] as const) {
      const { svc, embedder } = await service(scale, memory);
      const { sessionId } = await svc.startSession(scope);
      await svc.appendTurn(scope, sessionId, { role: 'user', text: 'We can spend about eighty lakhs.' });
      await svc.meaningIdle();
      await new Promise((resolve) => setImmediate(resolve));
      expect(embedder.texts).toEqual([]);
      svc.stopRetries();
      await runtime?.close();
      runtime = null;
    }
  });
});
