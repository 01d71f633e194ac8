import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeEngine } from '../../src/app/llm-probe.ts';
import { startFakeOpenAI } from '../support/fake-openai.ts';
import { testConfig } from '../support/config.ts';
import { closedPort } from '../support/net.ts';
import { startGatewayProcess } from '../support/processes.ts';
import { startTestServer, uniq } from '../gateway/support/real-server.ts';
import { http } from '../gateway/support/ws-tester.ts';

/** Where the LLM is and whether it answers, seen in the start-up log, /v1/health, a flush's error and /v1/extraction. */
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('an LLM you can see', () => {
  it('the start-up log names the extractor, embedder and LLM base URL; health reaches the LLM; a flush goes through the real openai client', async () => {
    const fake = await startFakeOpenAI();
    const dir = mkdtempSync(join(tmpdir(), 'memgate-llm-'));
    dirs.push(dir);
    const { proc, url } = await startGatewayProcess({
      name: 'llm-visible',
      env: { MEMGATE_EXTRACTOR: 'openai', MEMGATE_LLM_BASE_URL: fake.url, MEMGATE_LLM_API_KEY: 'sk-never-logged', MEMGATE_SQLITE_PATH: join(dir, 'm.db') },
      args: ['--port', '0'],
    });
    try {
      const engine = await proc.waitForLine(/"msg":"memory engine"/, 10_000);
      expect(JSON.parse(engine)).toMatchObject({ extractor: 'openai (gpt-4o-mini)', embedder: 'offline', llm: fake.url });

      const health = await http(url, 'GET', '/v1/health');
      expect(health.body.servers).toEqual([{ server: 'LLM', address: fake.url, ok: true, problem: null, ms: expect.any(Number) }]);
      const probe = fake.requests.find((r) => r.method === 'GET' && r.path === '/v1/models');
      expect(probe?.headers['authorization']).toBe('Bearer sk-never-logged');

      const userId = uniq('u');
      const start = await http(url, 'POST', '/v1/sessions', { body: { agentId: 'real-estate', userId } });
      await http(url, 'POST', `/v1/sessions/${start.body.sessionId}/turns`, { body: { role: 'user', text: 'My budget is 80 lakh rupees.' } });
      const flush = await http(url, 'POST', `/v1/agents/real-estate/users/${userId}/flush`);
      expect(flush.status).toBe(200);
      expect(flush.body.ran).toBe(true);
      expect(fake.requests.some((r) => r.path === '/v1/chat/completions')).toBe(true);
      expect(proc.lines.join('\n')).not.toContain('sk-never-logged');
    } finally {
      await proc.stop();
      await fake.close();
    }
  });

  it('an unreachable LLM: health says so with its host, a flush fails naming it, and /v1/extraction counts the failure', async () => {
    const UNREACHABLE = `http://127.0.0.1:${await closedPort()}/v1`;
    const srv = await startTestServer({ config: { adapters: { extractor: 'openai' }, llm: { baseURL: UNREACHABLE, maxRetries: 0 } } });
    try {
      const health = await http(srv.base, 'GET', '/v1/health');
      expect(health.body.servers).toEqual([{ server: 'LLM', address: UNREACHABLE, ok: false, problem: `LLM at ${UNREACHABLE} unreachable: connection refused`, ms: expect.any(Number) }]);

      const userId = uniq('u');
      const start = await http(srv.base, 'POST', '/v1/sessions', { body: { agentId: 'real-estate', userId } });
      await http(srv.base, 'POST', `/v1/sessions/${start.body.sessionId}/turns`, { body: { role: 'user', text: 'My budget is 80 lakh rupees.' } });
      const flush = await http(srv.base, 'POST', `/v1/agents/real-estate/users/${userId}/flush`);
      expect(flush.status).toBe(503);
      expect(flush.body.error.code).toBe('unavailable');
      expect(flush.body.error.message).toContain(`LLM at ${UNREACHABLE} unreachable: connection refused`);

      const lane = await http(srv.base, 'GET', '/v1/extraction');
      expect(lane.body.counts).toMatchObject({ running: 0, failed: 1, deadLettered: 0 });
      expect(lane.body.errors).toEqual([expect.objectContaining({ userId, state: 'failed', code: 'unavailable', message: expect.stringContaining(`LLM at ${UNREACHABLE} unreachable`) })]);
      // The turn is still buffered: a later flush, once the LLM answers, extracts it.
      expect((await http(srv.base, 'GET', `/v1/agents/real-estate/users/${userId}/turns`)).body.turns).toHaveLength(1);
    } finally {
      await srv.close();
    }
  });

  it('a port fetch refuses (9, discard) is named as such, not as a vague "fetch failed"', async () => {
    const srv = await startTestServer({ config: { adapters: { extractor: 'openai' }, llm: { baseURL: 'http://127.0.0.1:9/v1', maxRetries: 0 } } });
    try {
      const [llm] = (await http(srv.base, 'GET', '/v1/health')).body.servers;
      expect(llm.problem).toBe('LLM at http://127.0.0.1:9/v1 unreachable: fetch refuses this port (a port the Fetch standard blocks, such as 9 or 6000): use another');
    } finally {
      await srv.close();
    }
  });

  it('the engine line never shows credentials in a base URL', () => {
    const config = testConfig({
      adapters: { extractor: 'openai', embedder: 'openai' },
      llm: { baseURL: 'https://user:pw@llm.example.com/v1?key=k', apiKey: 'sk-x' },
      embeddings: { baseURL: 'http://127.0.0.1:8080/v1/' },
    });
    expect(describeEngine(config)).toEqual({
      extractor: 'openai (gpt-4o-mini)',
      embedder: 'openai',
      llm: 'https://llm.example.com/v1',
      embeddings: 'http://127.0.0.1:8080/v1 (text-embedding-3-small)',
    });
    expect(describeEngine(testConfig())).toEqual({ extractor: 'offline', embedder: 'offline' });
  });
});
