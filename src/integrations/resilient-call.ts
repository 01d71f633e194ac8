import { MemgateError } from '../core/errors.ts';
import { MemgateClient } from '../client/index.ts';
import type { AppendParams, ContextReply, SearchReply, SocketFactory } from '../client/index.ts';

/** Where an integration's log lines go (LiveKit's logger, console, pino...). */
export interface IntegrationLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

/** Options of a memgate call held on behalf of a voice framework. */
export interface ResilientCallOptions {
  /** memgate's base URL (`http://host:7700`) or WebSocket URL; several (gateways of one cluster): reconnects go to the next. */
  url: string | readonly string[];
  /** API key (none in open dev mode). */
  token?: string;
  agentId: string;
  userId: string;
  /** Default: a new id per call. Reused on every reconnect, so a restored call is the same session. */
  sessionId?: string;
  /** Budget for the context fetch at call start; past it the call starts without memory (default 1000 ms). */
  startTimeoutMs?: number;
  /** A request (append, end) unanswered this long is retried later with the same turnId (default 3000 ms). */
  requestTimeoutMs?: number;
  /** Turns kept while memgate is unreachable; past it the oldest are dropped with a log line (default 1000). */
  maxQueuedTurns?: number;
  /** Wait between delivery attempts while memgate is down: doubles from `minRetryMs` to `maxRetryMs` (default 200 ms to 5 s). */
  minRetryMs?: number;
  maxRetryMs?: number;
  logger?: IntegrationLogger;
  /** The context, when memgate answered only after `start()` had given up (once per call). */
  onLateContext?: (context: ContextReply) => void;
  /** WebSocket implementation (default: the `ws` package). */
  socket?: SocketFactory;
}

/** Refusals of the call itself that no retry can change (a conflict: the session id belongs to another user). */
const FINAL_CODES: ReadonlySet<string> = new Set(['conflict', 'bad_request', 'unauthorized', 'forbidden']);

/** Appends sent at once from the head of the queue (one WebSocket keeps them in order). */
const BATCH = 64;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `p`, or null once `ms` passed (the timer is cleared either way, so it never holds the process open). */
async function within<T>(p: Promise<T>, ms: number): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([p, new Promise<null>((r) => (timer = setTimeout(() => r(null), Math.max(0, ms))))]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One call's memory for a voice framework, built so that memory never holds the
 * agent up: the start is bounded, appends return at once and are delivered from a
 * bounded queue in order (retried with the same turnId, so the server stores each
 * once), and a memgate that is slow or down only degrades memory, logged once,
 * until it answers again. `end()` delivers what is queued, then ends the call.
 */
export class ResilientCall {
  private client: MemgateClient | null = null;
  private connecting: Promise<MemgateClient | null> | null = null;
  private readonly queue: AppendParams[] = [];
  private pumping = false;
  private retryMs: number;
  private isDegraded = false;
  private ending: Promise<void> | null = null;
  private closed = false;
  private dropped = 0;
  private context: ContextReply | null = null;
  /** `start()` returned (with or without a context): a context after this is late. */
  private startReturned = false;
  /** Turns acknowledged by memgate (a duplicate ack counts: the turn is stored). */
  delivered = 0;
  readonly sessionId: string;

  constructor(private readonly opts: ResilientCallOptions) {
    this.sessionId = opts.sessionId ?? `s_${globalThis.crypto.randomUUID()}`;
    this.retryMs = opts.minRetryMs ?? 200;
  }

  /** True while memgate is unreachable (turns queue, search answers "unavailable"). */
  get degraded(): boolean {
    return this.isDegraded;
  }

  /** Turns waiting for delivery. */
  get queued(): number {
    return this.queue.length;
  }

  /** Connect and start the call; the context, or null when memgate did not answer within `startTimeoutMs`. */
  async start(): Promise<ContextReply | null> {
    const budget = this.opts.startTimeoutMs ?? 1000;
    const client = await within(this.connect(), budget);
    this.startReturned = true;
    if (!client) this.markDegraded(new MemgateError('unavailable', `no context within ${budget} ms`));
    return client ? this.context : null;
  }

  /** Queue a turn for delivery; returns at once. A turn without a turnId gets one now, so retries stay idempotent. */
  append(turn: AppendParams): void {
    if (this.closed || this.ending) {
      this.log('warn', 'memgate: turn after the call ended, not stored', { turnId: turn.turnId });
      return;
    }
    this.queue.push({ ...turn, turnId: turn.turnId ?? `t_${globalThis.crypto.randomUUID()}` });
    const max = this.opts.maxQueuedTurns ?? 1000;
    if (this.queue.length > max) {
      const lost = this.queue.splice(0, this.queue.length - max);
      this.dropped += lost.length;
      this.log('warn', 'memgate: turn queue full, oldest turns dropped', { dropped: lost.length, droppedTotal: this.dropped, max });
    }
    void this.pump();
  }

  /** memory_search within `deadlineMs` (+ `graceMs` for the network); null when memgate is down or late. */
  async search(query: string, opts: { k?: number; deadlineMs: number; graceMs?: number }): Promise<SearchReply | null> {
    const client = this.client;
    if (!client || this.isDegraded) {
      // Answer now without memory; try to reconnect in the background for the next call.
      if (!client && !this.closed && !this.ending) void this.connect();
      return null;
    }
    try {
      return await within(client.search(query, { k: opts.k, deadlineMs: opts.deadlineMs }), opts.deadlineMs + (opts.graceMs ?? 150));
    } catch (err) {
      this.log('warn', 'memgate: memory_search failed', { err: describe(err) });
      return null;
    }
  }

  /** Deliver the queue (within `timeoutMs`), send `end` so extraction runs, close. Idempotent. */
  end(timeoutMs = 5000): Promise<void> {
    this.ending ??= this.finish(timeoutMs);
    return this.ending;
  }

  private async finish(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while ((this.queue.length > 0 || this.pumping) && performance.now() < deadline) await sleep(20);
    let ended = false;
    // A refused call (closed) has nothing to end.
    while (!ended && !this.closed && this.queue.length === 0 && performance.now() < deadline) {
      const client = await within(this.connect(), deadline - performance.now());
      if (client) {
        try {
          ended =
            (await within(
              client.end().then(() => true),
              deadline - performance.now(),
            )) ?? false;
        } catch (err) {
          this.markDegraded(err);
        }
      }
      if (!ended) await sleep(Math.min(this.retryMs, Math.max(0, deadline - performance.now())));
    }
    if (!ended && !this.closed) this.log('warn', 'memgate: call closed before memory caught up; undelivered turns are lost', { queued: this.queue.length, sessionId: this.sessionId });
    this.closed = true;
    this.queue.length = 0;
    await this.client?.close().catch(() => undefined);
    this.client = null;
  }

  /** The connected client with the call started on it, or null when memgate cannot be reached now. */
  private connect(): Promise<MemgateClient | null> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      let client: MemgateClient | null = null;
      try {
        client = await MemgateClient.connect({
          url: this.opts.url,
          token: this.opts.token,
          requestTimeoutMs: this.opts.requestTimeoutMs ?? 3000,
          reconnect: { minDelayMs: this.opts.minRetryMs ?? 200, maxDelayMs: this.opts.maxRetryMs ?? 5000 },
          socket: this.opts.socket,
          onStateChange: (s) => {
            if (s === 'reconnecting') this.markDegraded(new MemgateError('unavailable', 'connection lost'));
            // Restored: the client re-sent every unanswered append itself.
            else if (s === 'open' && this.client) this.markHealthy();
          },
        });
        const context = await client.start({ agentId: this.opts.agentId, userId: this.opts.userId, sessionId: this.sessionId });
        if (!this.context) {
          this.context = context;
          if (this.startReturned && !this.closed) this.opts.onLateContext?.(context);
        }
        if (this.closed) {
          await client.close();
          return null;
        }
        this.client = client;
        this.markHealthy();
        void this.pump();
        return client;
      } catch (err) {
        await client?.close().catch(() => undefined);
        if (err instanceof MemgateError && FINAL_CODES.has(err.code)) this.refuse(err);
        else this.markDegraded(err);
        return null;
      } finally {
        this.connecting = null;
      }
    })();
    return this.connecting;
  }

  /** Deliver the queue head-first in batches; on failure back off and retry the same turns (same turnIds). */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.queue.length > 0 && !this.closed) {
        const client = await this.connect();
        if (!client) {
          await this.backoff();
          continue;
        }
        const batch = this.queue.slice(0, BATCH);
        const results = await Promise.allSettled(batch.map((t) => client.append(t)));
        let failure: unknown = null;
        for (const [i, r] of results.entries()) {
          const turn = batch[i]!;
          if (r.status === 'fulfilled') this.settle(turn);
          else if (r.reason instanceof MemgateError && !r.reason.retryable && r.reason.code !== 'not_started') {
            // A turn memgate refuses (too large, malformed) will never be stored: log it and move on.
            this.settle(turn);
            this.log('warn', 'memgate: turn refused, not stored', { turnId: turn.turnId, code: r.reason.code, err: r.reason.message });
          } else failure ??= r.reason;
        }
        if (failure) {
          if (failure instanceof MemgateError && failure.code === 'not_started') await this.dropClient();
          this.markDegraded(failure);
          await this.backoff();
        } else this.markHealthy();
      }
    } finally {
      this.pumping = false;
    }
  }

  /** memgate refused the call itself (the session id is someone else's, a bad key): retrying cannot help, so memory is off for this call. */
  private refuse(err: MemgateError): void {
    if (this.closed) return;
    this.closed = true;
    this.log('warn', 'memgate: call refused, memory is off for this call; queued turns are dropped', { code: err.code, err: err.message, queued: this.queue.length, sessionId: this.sessionId });
    this.queue.length = 0;
  }

  private settle(turn: AppendParams): void {
    const i = this.queue.indexOf(turn);
    if (i >= 0) this.queue.splice(i, 1);
    this.delivered++;
  }

  private async dropClient(): Promise<void> {
    const c = this.client;
    this.client = null;
    await c?.close().catch(() => undefined);
  }

  private async backoff(): Promise<void> {
    await sleep(this.retryMs);
    this.retryMs = Math.min(this.opts.maxRetryMs ?? 5000, this.retryMs * 2);
  }

  private markDegraded(err: unknown): void {
    if (this.isDegraded || this.closed) return;
    this.isDegraded = true;
    this.log('warn', 'memgate: memory degraded, turns are queued and the agent continues without it', { err: describe(err), queued: this.queue.length, sessionId: this.sessionId });
  }

  private markHealthy(): void {
    this.retryMs = this.opts.minRetryMs ?? 200;
    if (!this.isDegraded) return;
    this.isDegraded = false;
    this.log('info', 'memgate: memory restored', { delivered: this.delivered, queued: this.queue.length, sessionId: this.sessionId });
  }

  private log(level: 'info' | 'warn', msg: string, fields?: Record<string, unknown>): void {
    const logger = this.opts.logger;
    if (logger) logger[level](msg, fields);
    else if (level === 'warn') console.warn(msg, fields ?? '');
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
