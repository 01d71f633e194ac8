import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, uniq, type TestServer } from '../gateway/support/real-server.ts';
import { MCP_TOOLS } from '../../src/mcp/tools.ts';
import { ERAS, connectHttp, mcpClient, rememberConversation, tool, toolError } from './support.ts';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

/** `/mcp` on the real gateway (embedded runtime), with the official client SDK, in both protocol eras. */
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ keys: { 'key-acme': 'acme', 'key-globex': 'globex' } });
});
afterAll(() => srv.close());

const flush = (user: { agentId: string; userId: string }) => async () => {
  await srv.runtime.service.flush({ tenantId: 'acme', ...user });
};

describe.each(ERAS)('MCP over streamable HTTP, protocol %s', (era) => {
  it('lists the five tools, each with a description and a JSON schema that requires agentId and userId', async () => {
    const client = await connectHttp(srv.base, 'key-acme', era);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([...MCP_TOOLS].sort());
      for (const t of tools) {
        expect(t.description?.length).toBeGreaterThan(40);
        expect(t.inputSchema).toMatchObject({ type: 'object', properties: { agentId: { type: 'string' }, userId: { type: 'string' } } });
        expect(t.inputSchema.required).toEqual(expect.arrayContaining(['agentId', 'userId']));
      }
      const search = tools.find((t) => t.name === 'memory_search')!;
      expect(search.inputSchema.required).toContain('query');
      expect(search.annotations).toMatchObject({ readOnlyHint: true });
      expect(tools.find((t) => t.name === 'memory_forget')!.annotations).toMatchObject({ destructiveHint: true });
    } finally {
      await client.close();
    }
  });

  it('remember → search → flush → supersession in the timeline → context → forget', async () => {
    const client = await connectHttp(srv.base, 'key-acme', era);
    const user = { agentId: uniq('a'), userId: uniq('u') };
    try {
      await rememberConversation(client, user, flush(user));
    } finally {
      await client.close();
    }
  });

  it('bad arguments are tool errors with the stable code bad_request; nothing is stored', async () => {
    const client = await connectHttp(srv.base, 'key-acme', era);
    const user = { agentId: uniq('a'), userId: uniq('u') };
    try {
      expect(await toolError(client, 'memory_search', { ...user, query: '' })).toMatchObject({ code: 'bad_request', message: expect.stringMatching(/^query:/) });
      expect(await toolError(client, 'memory_search', { ...user, query: 'x', k: 500 })).toMatchObject({ code: 'bad_request', message: expect.stringMatching(/^k:/) });
      expect(await toolError(client, 'memory_search', { ...user, query: 'x', asOf: 'yesterday-ish' })).toMatchObject({ code: 'bad_request', message: expect.stringMatching(/asOf/) });
      expect(await toolError(client, 'memory_remember', { agentId: user.agentId, text: 'no user' })).toMatchObject({ code: 'bad_request', message: expect.stringMatching(/^userId:/) });
      expect(await toolError(client, 'memory_remember', { ...user, text: 'hi', role: 'robot' })).toMatchObject({ code: 'bad_request' });
      for (const text of ['', '  ', '\u200b']) expect(await toolError(client, 'memory_remember', { ...user, text })).toMatchObject({ code: 'bad_request', message: expect.stringMatching(/^text:/) });
      expect(await srv.runtime.service.bufferedTurns({ tenantId: 'acme', ...user })).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("a session of another user is refused with conflict; another tenant's memory is never visible", async () => {
    const acme = await connectHttp(srv.base, 'key-acme', era);
    const globex = await connectHttp(srv.base, 'key-globex', era);
    const user = { agentId: uniq('a'), userId: uniq('u') };
    try {
      await tool(acme, 'memory_remember', { ...user, text: 'The gate code is 4417', sessionId: `${user.userId}-call` });
      expect(await toolError(acme, 'memory_remember', { ...user, userId: uniq('other'), text: 'x', sessionId: `${user.userId}-call` })).toMatchObject({ code: 'conflict' });
      // The same agent and user ids under another key are another tenant's, empty.
      expect((await tool(globex, 'memory_search', { ...user, query: 'gate code' }))['results']).toEqual([]);
      expect((await tool(globex, 'memory_context', user))['contextBlock']).not.toContain('4417');
      await tool(globex, 'memory_forget', user);
      expect((await tool(acme, 'memory_search', { ...user, query: 'gate code' }))['results'].length).toBeGreaterThan(0);
    } finally {
      await acme.close();
      await globex.close();
    }
  });

  it('a missing or unknown key is refused 401 unauthorized, as on every route', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }] as Array<Record<string, string>>) {
      const client = mcpClient(era);
      await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${srv.base}/mcp`), { requestInit: { headers } }))).rejects.toThrow(/401|nauthorized/);
    }
    const res = await fetch(`${srv.base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
  });
});

describe('/mcp edges', () => {
  it('an oversized body is refused 413 too_large like the other routes', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(2 * 1024 * 1024) } });
    const res = await fetch(`${srv.base}/mcp`, {
      method: 'POST',
      headers: { authorization: 'Bearer key-acme', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: big,
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: { code: 'too_large' } });
  });

  it('GET (a 2025 session stream) is not served: the endpoint is stateless', async () => {
    const res = await fetch(`${srv.base}/mcp`, { headers: { authorization: 'Bearer key-acme', accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
    await res.arrayBuffer();
  });
});
