import { MemgateError } from '../core/errors.ts';
import type { FromThread, ToThread } from './thread-protocol.ts';

/** The sentence encoder as the extraction thread sees it: raw vectors, one per text (UseLiteModel's shape). */
export interface BorrowedEncoder {
  model: { embed(texts: string[]): Promise<Float32Array[]> };
  /** An `encoded` / `encode-failed` answer from the gateway. */
  settle(message: Extract<ToThread, { kind: 'encoded' | 'encode-failed' }>): void;
}

/**
 * The extraction thread's side of the lent encoder (ThreadLaneOptions.encode): each call goes
 * to the gateway as an `encode` message and its vectors come back. The thread loads no model.
 */
export function borrowEncoder(post: (message: FromThread) => void): BorrowedEncoder {
  const waiting = new Map<number, { resolve(v: Float32Array[]): void; reject(err: unknown): void }>();
  let nextId = 1;
  return {
    model: {
      embed(texts) {
        const id = nextId++;
        return new Promise((resolve, reject) => {
          waiting.set(id, { resolve, reject });
          post({ kind: 'encode', id, texts });
        });
      },
    },
    settle(message) {
      const call = waiting.get(message.id);
      if (!call) return;
      waiting.delete(message.id);
      if (message.kind === 'encoded') call.resolve(message.vectors);
      else call.reject(new MemgateError(message.error.code, `sentence encoder lent by the gateway: ${message.error.message}`, { retryable: message.error.retryable }));
    },
  };
}
