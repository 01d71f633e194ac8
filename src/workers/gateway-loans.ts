import { MemgateError } from '../core/errors.ts';
import type { Scope } from '../core/types.ts';
import type { FromThread, ToThread } from './thread-protocol.ts';

/** What the gateway lends its extraction thread, as the thread sees it (each call a message, answered by id). */
export interface GatewayLoans {
  /** The sentence encoder: raw vectors, one per text (UseLiteModel's shape). The thread loads no model. */
  model: { embed(texts: string[]): Promise<Float32Array[]> };
  /**
   * The turn buffer's removal, made by the gateway on its own connection: the append's file then
   * has one writer, so an append never waits for the thread's write lock (turns-file.ts).
   */
  remove(scope: Scope, turnIds: readonly string[]): Promise<void>;
  /** An `answered` / `refused` message from the gateway. */
  settle(message: Extract<ToThread, { kind: 'answered' | 'refused' }>): void;
}

/** The extraction thread's side of ThreadLaneOptions.encode and .removeTurns. */
export function borrowFromGateway(post: (message: FromThread) => void): GatewayLoans {
  const waiting = new Map<number, { resolve(vectors: Float32Array[]): void; reject(err: unknown): void; what: string }>();
  let nextId = 1;
  const ask = (what: string, send: (id: number) => FromThread) =>
    new Promise<Float32Array[]>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject, what });
      post(send(id));
    });
  return {
    model: { embed: (texts) => ask('sentence encoder', (id) => ({ kind: 'encode', id, texts })) },
    remove: async (scope, turnIds) =>
      void (await ask('turn removal', (id) => ({ kind: 'remove', id, scope: { tenantId: scope.tenantId, agentId: scope.agentId, userId: scope.userId }, turnIds: [...turnIds] }))),
    settle(message) {
      const call = waiting.get(message.id);
      if (!call) return;
      waiting.delete(message.id);
      if (message.kind === 'answered') call.resolve(message.vectors ?? []);
      else call.reject(new MemgateError(message.error.code, `${call.what} lent by the gateway: ${message.error.message}`, { retryable: message.error.retryable }));
    },
  };
}
