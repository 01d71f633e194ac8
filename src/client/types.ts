import type { Role } from '../core/types.ts';
import type { SocketFactory } from './transport.ts';
import type { AckReply, ContextReply, MemgateEvent, SearchReply } from '../core/wire.ts';

export type { AckReply, ContextReply, SearchReply, MemgateEvent };

/** Wire encoding of a client connection: JSON text frames or MessagePack binary frames. */
export type Encoding = 'json' | 'msgpack';

/** Reconnect policy: exponential backoff between `minDelayMs` and `maxDelayMs`, at most `retries` attempts in a row. */
export interface ReconnectOptions {
  retries?: number;
  minDelayMs?: number;
  maxDelayMs?: number;
}

/** Options of `MemgateClient.connect`. */
export interface ConnectOptions {
  /**
   * `ws://host:port/v1/ws`, or the server's base URL (`http://host:port`). Several (gateways of one
   * cluster): the first that answers serves the call, and each reconnect tries the next one.
   */
  url: string | readonly string[];
  /** API key, sent as `Authorization: Bearer` (none in open dev mode). */
  token?: string;
  encoding?: Encoding;
  /** A request not answered within this many ms (reconnects included) rejects with `unavailable`; also bounds each connection attempt's handshake. */
  requestTimeoutMs?: number;
  /** `false` disables automatic reconnect. */
  reconnect?: ReconnectOptions | false;
  /** Called on connection state changes (logs, UI). */
  onStateChange?: (state: ClientState) => void;
  /** The WebSocket implementation (default: `ws` in Node, the native one in browsers). */
  socket?: SocketFactory;
}

/** Connection state as reported to `onStateChange`. */
export type ClientState = 'open' | 'reconnecting' | 'closed';

/** Session start parameters; a sessionId is made client-side when absent, so a retried start is idempotent. */
export interface StartParams {
  agentId: string;
  userId: string;
  sessionId?: string;
}

/** One turn to append; a turnId is made client-side when absent, so a retried append is stored once. */
export interface AppendParams {
  role: Role;
  text: string;
  turnId?: string;
  /** ISO-8601 string or epoch milliseconds. */
  ts?: string | number;
  speaker?: string;
  asrConfidence?: number;
  interrupted?: boolean;
}

/** Search options. */
export interface SearchParams {
  k?: number;
  deadlineMs?: number;
}

/** Live event handler: the event and the subscribed topic that delivered it. */
export type EventHandler = (event: MemgateEvent, topic: string) => void;
