import { MemgateError, sessionConflict } from '../core/errors.ts';
import type { MemoryApi } from '../service/api.ts';
import type { MemoryBackend, UserRef } from './backend.ts';

/** The MCP tools on the service in this process, for one tenant. */
export function serviceBackend(service: MemoryApi, tenantId: string): MemoryBackend {
  const scope = (u: UserRef) => ({ tenantId, agentId: u.agentId, userId: u.userId });
  return {
    search: (u, query, options) => service.search(scope(u), query, options),
    context: (u) => service.readContext(scope(u)),
    async remember(u, input) {
      const session = await service.session(tenantId, input.sessionId);
      // Opening reads the context too; only the first remember of a session pays for it.
      if (session === null) await service.startSession(scope(u), input.sessionId);
      else if (session.scope.agentId !== u.agentId || session.scope.userId !== u.userId) throw sessionConflict(input.sessionId);
      else if (session.endedAt !== null) throw new MemgateError('not_started', `session "${input.sessionId}" has ended; remember into another sessionId (or none)`);
      return service.appendTurn(scope(u), input.sessionId, { role: input.role, text: input.text, turnId: input.turnId, ts: input.ts });
    },
    timeline: (u) => service.timeline(scope(u), true),
    forget: (u) => service.forget(scope(u)),
  };
}
