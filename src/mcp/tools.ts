import { McpServer, type CallToolResult, type StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { toEdgeError } from '../core/edge-error.ts';
import { badRequest } from '../core/errors.ts';
import { MAX_ID_CHARS, newId } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import { MEMORY_SEARCH_MAX_K } from '../core/search-tool.ts';
import { inTsWindow, isBlankText, TS_RANGE } from '../core/turn-check.ts';
import { memgateVersion } from '../core/version.ts';
import { mcpSessionId, type MemoryBackend, type UserRef } from './backend.ts';

/** Tool names: part of the protocol (docs/protocol.md "MCP"). */
export const MCP_TOOLS = ['memory_search', 'memory_context', 'memory_remember', 'memory_timeline', 'memory_forget'] as const;

const id = (what: string) => z.string().min(1).max(MAX_ID_CHARS).describe(what);
const user = {
  agentId: id('The agent (assistant, bot or voice agent) whose memory this is.'),
  userId: id('The person the memory is about (caller id, customer id).'),
};
/** ISO-8601 or epoch milliseconds, as everywhere on the wire; checked in the handler so the JSON schema stays plain. */
const instant = (what: string) => z.union([z.string().min(1).max(64), z.number()]).describe(`${what} ISO-8601 (e.g. "2026-03-21T10:00:00Z") or epoch milliseconds.`);

const searchInput = z.object({
  ...user,
  query: z.string().min(1).max(4096).describe('What to look up, as a short standalone phrase with names and dates spelled out (e.g. "budget for the Baner flat").'),
  k: z.int().min(1).max(MEMORY_SEARCH_MAX_K).optional().describe('How many results to return (default 5).'),
  asOf: instant('Search the memory as it stood at this time: facts valid then, nothing said after.').optional(),
});
const userInput = z.object(user);
const rememberInput = z.object({
  ...user,
  // Refused as on both transports: a blank turn would read as "- [date] user: " in the context block.
  text: z
    .string()
    .refine((t) => !isBlankText(t), 'must not be empty or whitespace only')
    .describe('What was said, verbatim, or a fact stated as a sentence ("My budget is now 80 lakh").'),
  role: z.enum(['user', 'agent', 'system', 'tool']).optional().describe('Who said it: "user" (default) for the person, "agent" for the assistant.'),
  id: id('A unique id for this turn. Re-sending the same id stores nothing new (the reply says duplicate: true); give one whenever a retry is possible.').optional(),
  sessionId: id("The conversation this belongs to (e.g. a live call's session id). Default: one MCP session per agent and user.").optional(),
  ts: instant('When it was said. Default: now.').optional(),
});
const timelineInput = z.object({
  ...user,
  field: z
    .string()
    .min(1)
    .max(3 * MAX_ID_CHARS)
    .optional()
    .describe('One field (e.g. "budget") or entity key (e.g. "status:12 MG Road"); default: every field.'),
});

function instantMs(name: string, v: string | number): number {
  const ms = typeof v === 'number' ? v : Date.parse(v);
  if (inTsWindow(ms)) return ms;
  throw badRequest(`${name} must be an ISO-8601 time or epoch milliseconds ${TS_RANGE}`);
}

/**
 * The schema as listed (its JSON schema is zod's) but validated by the tool itself: the SDK's own
 * validation answers in free text, and a refused argument must carry the stable code `bad_request`.
 */
function listed(schema: z.ZodType): StandardSchemaWithJSON {
  const std = schema['~standard'] as StandardSchemaWithJSON['~standard'];
  return { '~standard': { ...std, validate: (value: unknown) => ({ value }) } };
}

/** Validate tool arguments; the first issue becomes the `bad_request` message, as on the HTTP routes. */
function parseArgs<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'arguments';
  throw badRequest(`${where}: ${issue?.message ?? 'invalid'}`);
}

function userOf(args: UserRef): UserRef {
  return { agentId: args.agentId, userId: args.userId };
}

export interface McpServerOptions {
  logger: Logger;
}

/**
 * One MCP server instance over a tenant's memory. Cheap to build: the HTTP route builds one per
 * request (stateless), stdio one per connection. Every tool answers its reply as JSON text and as
 * `structuredContent`; a failure is a tool error (`isError`) carrying the stable memgate code.
 */
export function createMemgateMcpServer(backend: MemoryBackend, options: McpServerOptions): McpServer {
  const server = new McpServer({ name: 'memgate', version: memgateVersion() }, { capabilities: { tools: {} } });
  const run = async (work: () => Promise<{ text: string; data: Record<string, unknown> }>): Promise<CallToolResult> => {
    try {
      const { text, data } = await work();
      return { content: [{ type: 'text', text }], structuredContent: data };
    } catch (err) {
      const e = toEdgeError(err, options.logger);
      return { isError: true, content: [{ type: 'text', text: `memgate error ${e.code}: ${e.message}` }], structuredContent: { error: { code: e.code, message: e.message } } };
    }
  };
  const json = (data: object) => ({ text: JSON.stringify(data), data: data as Record<string, unknown> });

  server.registerTool(
    'memory_search',
    {
      title: 'Search memory',
      description:
        'Search the long-term memory of earlier conversations with this user. Use it when the user refers to something said or decided ' +
        'before and memory_context does not already answer it. Each result has a confidence (high/medium/low: state high ones, hedge or ' +
        'confirm low ones), a source tier (fact, recent, acu, hybrid, cold) and, when its value has since changed, `outdated` with the ' +
        'current value: never present an outdated result as current.',
      inputSchema: listed(searchInput),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (raw) =>
      run(async () => {
        const args = parseArgs(searchInput, raw);
        const opts = { ...(args.k !== undefined ? { k: args.k } : {}), ...(args.asOf !== undefined ? { asOf: instantMs('asOf', args.asOf) } : {}) };
        return json(await backend.search(userOf(args), args.query, opts));
      }),
  );

  server.registerTool(
    'memory_context',
    {
      title: 'Read the memory context',
      description:
        'What memgate knows about this user now, as a call would start with it: a ready-to-use context block (profile, current facts, ' +
        'recent turns, summaries of past conversations) plus the structured fields behind it. Read it once at the start of a ' +
        'conversation; it opens nothing and changes nothing.',
      inputSchema: listed(userInput),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (raw) =>
      run(async () => {
        const args = parseArgs(userInput, raw);
        const { tools: _tools, ...context } = await backend.context(userOf(args));
        return { text: context.contextBlock || '(no memory of this user yet)', data: context };
      }),
  );

  server.registerTool(
    'memory_remember',
    {
      title: 'Remember a turn or fact',
      description:
        "Store something the user (or the agent) said, verbatim, in the user's memory. It is searchable at once; facts are extracted " +
        'from it in the background (newer statements supersede older ones, the history is kept). Idempotent by `id`: a retry with the ' +
        'same id is a duplicate, never a second copy.',
      inputSchema: listed(rememberInput),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (raw) =>
      run(async () => {
        const args = parseArgs(rememberInput, raw);
        const u = userOf(args);
        const sessionId = args.sessionId ?? mcpSessionId(u);
        const ack = await backend.remember(u, {
          sessionId,
          role: args.role ?? 'user',
          text: args.text,
          turnId: args.id ?? newId('t_'),
          ...(args.ts !== undefined ? { ts: instantMs('ts', args.ts) } : {}),
        });
        return json({ ...ack, sessionId });
      }),
  );

  server.registerTool(
    'memory_timeline',
    {
      title: 'Fact history',
      description:
        'The history of what the user said about a field (or every field): each value with its status (active, superseded, retracted, ' +
        'expired), when it held in the world (validFrom/validUntil) and when it was recorded. Use it to answer "what was it before" or ' +
        '"when did it change".',
      inputSchema: listed(timelineInput),
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (raw) =>
      run(async () => {
        const args = parseArgs(timelineInput, raw);
        const all = await backend.timeline(userOf(args));
        const entities = args.field === undefined ? all : all.filter((e) => e.field === args.field || e.key === args.field);
        return json({ entities });
      }),
  );

  server.registerTool(
    'memory_forget',
    {
      title: 'Forget a user',
      description: 'Erase everything memgate holds about this user for this agent: facts, history, turns, summaries, vectors. Irreversible; only ' + 'when the user asks to be forgotten.',
      inputSchema: listed(userInput),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    (raw) =>
      run(async () => {
        const args = parseArgs(userInput, raw);
        const u = userOf(args);
        await backend.forget(u);
        return json({ ...u, forgotten: true });
      }),
  );

  return server;
}
