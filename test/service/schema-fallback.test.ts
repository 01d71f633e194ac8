import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/core/logger.ts';
import { SchemaRegistry } from '../../src/service/schema-registry.ts';
import { createRuntime } from '../../src/app/wiring.ts';
import { testConfig } from '../support/config.ts';

/** An agent without a schema of its own extracts with default.json, and the log says so once per agent. */
describe('schema fallback', () => {
  it('logs once per agent that falls back to the default, never for an agent with a shipped or stored schema', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger('info', {}, (l) => lines.push(JSON.parse(l) as Record<string, unknown>));
    const runtime = await createRuntime(testConfig({ sqlite: { path: ':memory:' }, log: { level: 'silent' } }));
    try {
      const registry = new SchemaRegistry(runtime.ports.documents, runtime.config.schemasDir, logger);
      const fallbacks = () => lines.filter((l) => String(l['msg']).startsWith('agent has no extraction schema'));

      expect((await registry.get('default', 'real-estate')).fields.map((f) => f.name)).toContain('budget');
      expect(fallbacks()).toEqual([]);

      const fallback = await registry.get('default', 'realty-bot');
      await registry.get('default', 'realty-bot');
      expect(fallback.fields.length).toBeGreaterThan(0);
      expect(fallbacks()).toEqual([expect.objectContaining({ tenantId: 'default', agentId: 'realty-bot', schema: 'default', known: expect.arrayContaining(['real-estate', 'healthcare']) })]);

      // Another tenant's agent of the same name is another agent.
      await registry.get('acme', 'realty-bot');
      expect(fallbacks()).toHaveLength(2);

      await registry.put('default', 'custom', { fields: [{ name: 'budget', category: 'temporal', type: 'money', description: 'Budget' }] });
      await registry.get('default', 'custom');
      expect(fallbacks()).toHaveLength(2);
    } finally {
      await runtime.close();
    }
  });
});
