import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, uniq, type TestServer } from '../gateway/support/real-server.ts';
import { REPO_ROOT } from '../support/processes.ts';
import { TEST_EMBEDDER } from '../support/config.ts';
import { mcpClient, rememberConversation, tool } from './support.ts';

/** `memgate mcp` spawned as an MCP client spawns it: against a running gateway, and on its own embedded store. */
function spawnMcp(env: Record<string, string>) {
  return new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', 'src/app/main.ts', 'mcp', '--log-level', 'silent'],
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '', MEMGATE_EMBEDDER: TEST_EMBEDDER, ...env },
    stderr: 'pipe',
  });
}

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ keys: { 'key-acme': 'acme' } });
});
afterAll(() => srv.close());

describe('memgate mcp (stdio)', () => {
  it('against a gateway (MEMGATE_URL, MEMGATE_API_KEY): the whole conversation, in the tenant of the key', async () => {
    const client = mcpClient('2025-06-18');
    await client.connect(spawnMcp({ MEMGATE_URL: srv.base, MEMGATE_API_KEY: 'key-acme' }));
    const user = { agentId: uniq('a'), userId: uniq('u') };
    try {
      expect((await client.listTools()).tools).toHaveLength(5);
      await rememberConversation(client, user, async () => void (await srv.runtime.service.flush({ tenantId: 'acme', ...user })));
    } finally {
      await client.close();
    }
  }, 60_000);

  it('a refused key answers each tool with unauthorized', async () => {
    const client = mcpClient('2025-06-18');
    await client.connect(spawnMcp({ MEMGATE_URL: srv.base, MEMGATE_API_KEY: 'wrong' }));
    try {
      const r = await client.callTool({ name: 'memory_search', arguments: { agentId: 'a', userId: 'u', query: 'x' } });
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toMatchObject({ error: { code: 'unauthorized' } });
    } finally {
      await client.close();
    }
  }, 60_000);

  it('embedded (no MEMGATE_URL): remembers in its own store, idempotent by id, and forgets', async () => {
    const client = mcpClient('2026-07-28');
    await client.connect(spawnMcp({ MEMGATE_SQLITE_PATH: ':memory:' }));
    const user = { agentId: 'a', userId: 'u' };
    try {
      expect(await tool(client, 'memory_remember', { ...user, text: 'I live in Chennai', id: 'e1' })).toMatchObject({ turnId: 'e1', duplicate: false });
      expect(await tool(client, 'memory_remember', { ...user, text: 'I live in Chennai', id: 'e1' })).toMatchObject({ turnId: 'e1', duplicate: true });
      expect(JSON.stringify(await tool(client, 'memory_search', { ...user, query: 'where do I live' }))).toContain('Chennai');
      await tool(client, 'memory_forget', user);
      expect((await tool(client, 'memory_search', { ...user, query: 'where do I live' }))['results']).toEqual([]);
    } finally {
      await client.close();
    }
  }, 60_000);
});
