import type { HistogramSnapshot } from '../lib/histogram.ts';

/**
 * What one WebSocket load run does. The same spec drives memgate and the raw uWS
 * echo baseline, so the two figures differ only by the server.
 */
export interface WsLoadSpec {
  /** ws://HOST:PORT/v1/ws */
  url: string;
  /** Concurrent calls (one connection each). */
  connections: number;
  /** `cadence`: one request every cadenceMs per call; `saturation`: closed loop, `inFlight` outstanding per call. */
  mode: 'cadence' | 'saturation';
  /** What each call sends after its opening `start`: turn appends, or repeated session starts. */
  op: 'append' | 'start';
  /** Uniform random gap between two requests of one call (voice cadence: 3,000–7,000 ms). */
  cadenceMs: [number, number];
  /** Saturation only: requests outstanding per connection. */
  inFlight: number;
  /** Connections opened per second (a thundering herd of handshakes is not what is measured). */
  rampPerS: number;
  /** Load before the measured window starts. */
  warmupS: number;
  durationS: number;
  /** A request without a reply after this long counts as an error. */
  timeoutMs: number;
  agentId: string;
  /** Call i is user `${userPrefix}${userOffset + i}`. */
  userPrefix: string;
  userOffset: number;
  /** `op: 'start'` only: rotate through this many seeded users. */
  startUsers: number;
}

/** Child → parent messages. */
export type WsLoadMessage =
  { type: 'progress'; open: number; sent: number; replies: number; errors: number; measuring: boolean } | { type: 'result'; result: WsLoadResult } | { type: 'failed'; message: string };

/** What one generator process measured. */
export interface WsLoadResult {
  hist: HistogramSnapshot;
  /** Requests sent inside the measured window. */
  sent: number;
  /** Replies received over the whole run (ramp and warm-up included): the denominator of CPU per request. */
  totalReplies: number;
  errors: number;
  timeouts: number;
  errorReplies: number;
  connectFailures: number;
  /** Connections that closed before the end. */
  dropped: number;
  measuredS: number;
  /** First error message seen, to explain a non-zero error count. */
  firstError: string | null;
}
