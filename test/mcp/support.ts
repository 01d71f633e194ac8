import { Client, StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { expect } from 'vitest';

/** The protocol eras a client may speak to memgate: the 2026-07-28 revision, and a client pinned to 2025-06-18. */
export const ERAS = ['2026-07-28', '2025-06-18'] as const;
export type Era = (typeof ERAS)[number];

export function mcpClient(era: Era): Client {
  return new Client({ name: 'memgate-test', version: '1.0.0' }, era === '2026-07-28' ? { versionNegotiation: { mode: { pin: era } } } : { supportedProtocolVersions: [era] });
}

/** An official SDK client connected to `/mcp` with `Authorization: Bearer key`. */
export async function connectHttp(base: string, key: string, era: Era): Promise<Client> {
  const client = mcpClient(era);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

/** Call a tool and return its structured reply, failing the test on a tool error. */
export async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
  expect(r.content[0]).toMatchObject({ type: 'text' });
  return r.structuredContent as Record<string, any>;
}

/** Call a tool that must fail; returns the memgate error it carries. */
export async function toolError(client: Client, name: string, args: Record<string, unknown>): Promise<{ code: string; message: string }> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(r.isError).toBe(true);
  const error = (r.structuredContent as { error: { code: string; message: string } }).error;
  expect(r.content[0]).toMatchObject({ type: 'text', text: `memgate error ${error.code}: ${error.message}` });
  return error;
}

/**
 * The conversation every transport runs: remember (idempotent), search finds it at once,
 * a later change supersedes after extraction (location: temporal in the default schema), the timeline keeps both, forget empties.
 * `flush` runs extraction (a REST call: flushing is an operator's route, not a tool).
 */
export async function rememberConversation(client: Client, user: { agentId: string; userId: string }, flush: () => Promise<void>): Promise<void> {
  const first = await tool(client, 'memory_remember', { ...user, text: 'I live in Chennai', id: 'b1', ts: '2026-01-10T10:00:00Z' });
  expect(first).toMatchObject({ turnId: 'b1', duplicate: false, sessionId: expect.stringMatching(/^mcp-/) });
  expect(await tool(client, 'memory_remember', { ...user, text: 'I live in Chennai', id: 'b1', ts: '2026-01-10T10:00:00Z' })).toMatchObject({
    turnId: 'b1',
    seq: first['seq'],
    duplicate: true,
  });
  const found = await tool(client, 'memory_search', { ...user, query: 'where do I live' });
  expect(found['results'].some((r: { text: string }) => r.text.includes('Chennai'))).toBe(true);

  await flush();
  await tool(client, 'memory_remember', { ...user, text: 'I moved to Bangalore last week', id: 'b2', ts: '2026-02-10T10:00:00Z' });
  await flush();

  const timeline = await tool(client, 'memory_timeline', { ...user, field: 'location' });
  const budgets = timeline['entities'] as Array<{ field: string; status: string; supersededBy: string | null }>;
  expect(budgets.every((e) => e.field === 'location')).toBe(true);
  expect(budgets.map((e) => e.status).sort()).toEqual(['active', 'superseded']);
  expect(await tool(client, 'memory_timeline', { ...user, field: 'no_such_field' })).toEqual({ entities: [] });

  const context = await tool(client, 'memory_context', user);
  expect(context['contextBlock']).toContain('Bangalore');
  expect(context).not.toHaveProperty('tools');
  const search = await tool(client, 'memory_search', { ...user, query: 'where does the user live', k: 5 });
  const fact = search['results'].find((r: { source: string }) => r.source === 'fact');
  expect(fact).toMatchObject({ confidence: expect.any(String), score: expect.any(Number), fact: { field: 'location', status: 'active' } });
  // Before the move, the memory held Chennai as current.
  const past = await tool(client, 'memory_search', { ...user, query: 'where does the user live', asOf: '2026-01-20T00:00:00Z' });
  expect(JSON.stringify(past['results'])).toContain('Chennai');

  expect(await tool(client, 'memory_forget', user)).toEqual({ ...user, forgotten: true });
  expect(await tool(client, 'memory_timeline', user)).toEqual({ entities: [] });
  expect((await tool(client, 'memory_search', { ...user, query: 'where does the user live' }))['results']).toEqual([]);
}
