import type { Scope } from '../core/types.ts';
import type { MemoryApi } from '../service/api.ts';

// Its own file so context.ts and dropped-calls.ts can both name it without importing each other.

/** How a call ended, for its `session.ended` event. */
export interface EndOptions {
  ifGeneration?: number;
  /** `end` (an explicit end, the default) or `dropped` (the socket closed and the grace ran out). */
  reason?: 'end' | 'dropped';
  /** Seq of the call's last acked turn on the connection that ends it (WebSocket only). */
  lastSeq?: number;
}

/** The service as every gateway edge sees it: the same API, with the end's reason for its event. */
export interface ObservedService extends MemoryApi {
  endSession(scope: Scope, sessionId: string, options?: EndOptions): Promise<boolean>;
}
