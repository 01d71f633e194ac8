import type { Role } from '../core/types.ts';
import { stableHash } from '../core/ids.ts';
import type { AckReply, MemoryApi, SearchReply, TimelineEntity } from '../service/api.ts';

/** A user of the caller's tenant: the tenant is the backend's (the API key's), never a tool argument. */
export interface UserRef {
  agentId: string;
  userId: string;
}

/** What a session start would give the agent now: the context block and the structured fields behind it. */
export type ContextRead = Awaited<ReturnType<MemoryApi['readContext']>>;

/** A turn or stated fact to remember, already validated. */
export interface RememberInput {
  sessionId: string;
  role: Role;
  text: string;
  turnId?: string;
  ts?: number;
}

/**
 * The memory the MCP tools reach: the service in this process (the gateway's `/mcp`,
 * `memgate mcp` embedded) or a gateway over HTTP (`memgate mcp` with MEMGATE_URL).
 * Each implementation is bound to one tenant. Deliberately not here: sessions, schemas,
 * flush — an MCP client remembers and reads; calls and operations have their own routes.
 */
export interface MemoryBackend {
  search(user: UserRef, query: string, options: { k?: number; asOf?: number }): Promise<SearchReply>;
  context(user: UserRef): Promise<ContextRead>;
  /** Append to `sessionId`, opening it for the user when new (a session of another user is `conflict`). */
  remember(user: UserRef, input: RememberInput): Promise<AckReply>;
  /** Every bi-temporal record of the user, superseded and expired included. */
  timeline(user: UserRef): Promise<TimelineEntity[]>;
  forget(user: UserRef): Promise<void>;
}

/**
 * The session `memory_remember` writes to when the caller names none: one per agent and user,
 * derived (not stored), so every MCP client of that user appends to the same one and a re-sent
 * id is found there as a duplicate. Hashed because two 128-character ids would not fit an id.
 */
export function mcpSessionId(user: UserRef): string {
  return `mcp-${stableHash(user.agentId, user.userId)}`;
}
