import { ERROR_CODES, MemgateError, type ErrorCode } from '../core/errors.ts';
import type { AckReply, SearchReply, TimelineEntity } from '../service/api.ts';
import type { ContextRead, MemoryBackend, UserRef } from './backend.ts';

/** How long one gateway request may take before the tool answers `unavailable`. */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * The MCP tools on a running gateway, through its HTTP routes (docs/protocol.md "HTTP"):
 * the tenant is the API key's, exactly as for any other client of the gateway.
 */
export function httpBackend(baseUrl: string, apiKey: string | undefined): MemoryBackend {
  const root = baseUrl.replace(/\/+$/, '');
  const userPath = (u: UserRef) => `/v1/agents/${encodeURIComponent(u.agentId)}/users/${encodeURIComponent(u.userId)}`;

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (apiKey) headers['authorization'] = `Bearer ${apiKey}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(root + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (err) {
      throw new MemgateError('unavailable', `cannot reach the memgate gateway at ${root} (MEMGATE_URL)`, { cause: err });
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      throw new MemgateError('unavailable', `the gateway at ${root} answered ${res.status} with a body that is not JSON; is MEMGATE_URL a memgate gateway?`);
    }
    if (res.ok) return json as T;
    throw gatewayError(res.status, json);
  }

  return {
    search: (u, query, options) => call<SearchReply>('POST', '/v1/search', { agentId: u.agentId, userId: u.userId, query, ...options }),
    context: async (u) => {
      const { contextTokens: _tokens, ...context } = await call<ContextRead & { contextTokens?: number }>('GET', `${userPath(u)}/context`);
      return context;
    },
    async remember(u, input) {
      // Opening is idempotent for the session's owner and refused (409) for anyone else.
      await call('POST', '/v1/sessions', { agentId: u.agentId, userId: u.userId, sessionId: input.sessionId });
      const { sessionId, ...turn } = input;
      return call<AckReply>('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/turns`, { ...turn, agentId: u.agentId, userId: u.userId });
    },
    timeline: async (u) => (await call<{ entities: TimelineEntity[] }>('GET', `${userPath(u)}/entities?history=true`)).entities,
    forget: async (u) => void (await call('DELETE', userPath(u))),
  };
}

/** The gateway's `{error:{code, message}}` as the MemgateError it was; anything else by its status. */
function gatewayError(status: number, body: unknown): MemgateError {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  const code = typeof error?.code === 'string' && error.code in ERROR_CODES ? (error.code as ErrorCode) : status >= 500 ? 'unavailable' : 'internal';
  const message = typeof error?.message === 'string' ? error.message : `the gateway answered HTTP ${status}`;
  // The gateway already turned a retryable conflict into `unavailable`: a conflict here is the caller's to fix.
  return new MemgateError(code, message, code === 'conflict' ? { retryable: false } : {});
}
