import { MemgateError } from '../../../src/core/errors.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import type { QuarantinedTurn, Scope, Turn, TurnInput } from '../../../src/core/types.ts';
import type { SessionRecord } from '../../../src/ports/turn-buffer.ts';
import type { Config } from '../../../src/config/config-schema.ts';
import { testConfig } from '../../support/config.ts';
import { InProcessEventBus } from '../../../src/adapters/inprocess/event-bus.ts';
import type { GatewayRuntime } from '../../../src/gateway/context.ts';
import type { ContextFields } from '../../../src/memory/encoded-context.ts';
import type { BacklogView } from '../../../src/service/extraction-backlog.ts';
import type { AckReply, ContextReply, EncodedStart, ExtractionReport, MemoryApi, SearchReply } from '../../../src/service/api.ts';

/**
 * A scripted MemoryApi for gateway behaviour the embedded engine cannot show:
 * an asynchronous turn buffer, slow replies (graceful drain), internal failures.
 */
export class FakeMemoryApi implements MemoryApi {
  readonly turns = new Map<string, Turn[]>();
  private readonly sessions = new Map<string, Scope>();
  private readonly ended = new Set<string>();
  /** Append returns a Promise (like the Redis buffer) when true. */
  asyncAppend = false;
  /** Delay of every async reply. */
  delayMs = 0;
  /** Throw a plain Error (not a MemgateError) from search. */
  failSearch = false;
  /** Answer appends with a turnId no encoder can write (its getter throws): a fault past the service call, in the reply. */
  unencodableAck = false;

  private key(s: Scope): string {
    return `${s.tenantId}/${s.agentId}/${s.userId}`;
  }

  private async later<T>(v: () => T): Promise<T> {
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    return v();
  }

  startSession(scope: Scope, sessionId?: string): Promise<ContextReply> {
    const id = sessionId ?? `s_${this.sessions.size + 1}`;
    this.sessions.set(`${scope.tenantId}/${id}`, scope);
    this.ended.delete(`${scope.tenantId}/${id}`);
    return this.later(() => ({ sessionId: id, profile: {}, facts: [], possibly: [], recent: [], summaries: [], contextBlock: '', tools: [], tookMs: 0 }));
  }

  async startSessionEncoded(scope: Scope, sessionId?: string): Promise<EncodedStart> {
    const { sessionId: id, tookMs, ...fields } = await this.startSession(scope, sessionId);
    return { sessionId: id, tookMs, reopened: false, generation: 1, context: { version: 0, builtAt: 0, expiresAt: null, json: Buffer.from(JSON.stringify(fields)) } };
  }

  readContext(_scope: Scope): Promise<ContextFields> {
    return this.later(() => ({ profile: {}, facts: [], possibly: [], recent: [], summaries: [], contextBlock: '', tools: [] }));
  }

  appendTurn(scope: Scope, sessionId: string, input: TurnInput): AckReply | Promise<AckReply> {
    const list = this.turns.get(this.key(scope)) ?? [];
    this.turns.set(this.key(scope), list);
    const turnId = input.turnId ?? `t_${list.length + 1}`;
    const seen = list.find((t) => t.turnId === turnId);
    let reply: AckReply;
    if (seen) reply = { turnId, seq: seen.seq, duplicate: true };
    else {
      const seq = list.length + 1;
      list.push({ turnId, seq, sessionId, role: input.role, text: input.text, ts: input.ts ?? Date.now(), receivedAt: Date.now(), tokens: 1 });
      reply = { turnId, seq, duplicate: false };
    }
    if (this.unencodableAck)
      reply = {
        ...reply,
        turnId: Object.defineProperty({}, 'x', {
          enumerable: true,
          get: () => {
            throw new Error('unencodable');
          },
        }) as unknown as string,
      };
    return this.asyncAppend ? this.later(() => reply) : reply;
  }

  async session(tenantId: string, sessionId: string): Promise<SessionRecord | null> {
    const scope = this.sessions.get(`${tenantId}/${sessionId}`);
    return scope ? { sessionId, scope, startedAt: 0, endedAt: this.ended.has(`${tenantId}/${sessionId}`) ? 0 : null, generation: 1 } : null;
  }

  search(): Promise<SearchReply> {
    if (this.failSearch) return Promise.reject(new Error('database exploded at /secret/path'));
    return this.later(() => ({ results: [], tookMs: 0 }));
  }

  endSession(scope: Scope, sessionId: string): Promise<boolean> {
    this.ended.add(`${scope.tenantId}/${sessionId}`);
    return this.later(() => true);
  }

  async storedAck(scope: Scope, turnId: string): Promise<AckReply | null> {
    const seen = this.turns.get(this.key(scope))?.find((t) => t.turnId === turnId);
    return seen ? { turnId, seq: seen.seq, duplicate: true } : null;
  }

  flush(): Promise<ExtractionReport> {
    return Promise.reject(new MemgateError('unavailable', 'not in the fake'));
  }

  async timeline(): Promise<[]> {
    return [];
  }

  putSchema(): Promise<never> {
    return Promise.reject(new MemgateError('bad_request', 'fields: required'));
  }

  async forget(scope: Scope): Promise<void> {
    this.turns.delete(this.key(scope));
  }

  async bufferedTurns(scope: Scope): Promise<Turn[]> {
    return this.turns.get(this.key(scope)) ?? [];
  }

  async quarantined(_scope: Scope): Promise<QuarantinedTurn[]> {
    return [];
  }

  extractionBacklog(): BacklogView {
    return { users: 0, usersBehind: 0, turns: 0, tokens: 0, oldestAgeMs: 0, maxWindows: 0, byUser: [] };
  }
}

/** A GatewayRuntime around the fake service, listening on a free port. */
export function fakeRuntime(service: MemoryApi, overrides: Record<string, unknown> = {}): GatewayRuntime & { config: Config } {
  const config = testConfig({ sqlite: { path: ':memory:' }, server: { port: 0 }, log: { level: 'silent' }, ...overrides });
  return { config, service, logger: silentLogger, ports: { events: new InProcessEventBus(), bus: { depth: async () => 0 } } };
}
