import { MemgateError, type ErrorCode } from '../core/errors.ts';
import { clientCodec, type ClientCodec } from './codec.ts';
import type { ClientSocket, SocketFactory } from './transport.ts';
import type { AckReply, AppendParams, ConnectOptions, ContextReply, EventHandler, MemgateEvent, SearchParams, SearchReply, StartParams } from './types.ts';

interface Pending {
  frame: Record<string, unknown>;
  resolve(reply: Record<string, unknown>): void;
  reject(err: MemgateError): void;
  timer: ReturnType<typeof setTimeout>;
}

/** Set once by the entry point (`memgate/client`: the `ws` package; its browser build: the native WebSocket). */
let defaultSocket: SocketFactory | null = null;
export function setDefaultSocket(factory: SocketFactory): void {
  defaultSocket = factory;
}

const randomUUID = (): string => globalThis.crypto.randomUUID();

/** The server URL as a WebSocket URL ending in `/v1/ws`. */
function wsUrl(url: string): string {
  const u = new URL(url);
  if (u.protocol === 'http:') u.protocol = 'ws:';
  if (u.protocol === 'https:') u.protocol = 'wss:';
  if (u.pathname === '/' || u.pathname === '') u.pathname = '/v1/ws';
  return u.toString();
}

/**
 * Close codes after which reconnecting would only repeat the fault: a protocol error, an unacceptable or
 * invalid frame, a policy violation, a frame too large. Every other close (1001 going away, 1006 cut,
 * 1011, 1012 restart, 1013 try again later...) is reconnected.
 */
const FINAL_CLOSES: ReadonlyMap<number, ErrorCode> = new Map([
  [1002, 'bad_request'],
  [1003, 'bad_request'],
  [1007, 'bad_request'],
  [1008, 'forbidden'],
  [1009, 'too_large'],
  [1010, 'bad_request'],
]);

/** Refusals that a reconnect would meet again: the client gives up on them (a conflict: the session id is someone else's). */
const FINAL_CODES: ReadonlySet<ErrorCode> = new Set(['bad_request', 'conflict', 'unauthorized', 'forbidden', 'not_found']);

/** Drop undefined fields so both encodings carry the same keys. */
function compact(o: Record<string, unknown>): Record<string, unknown> {
  for (const k of Object.keys(o)) if (o[k] === undefined) delete o[k];
  return o;
}

/**
 * memgate's WebSocket client for Node. One client carries one call. On a
 * dropped connection it reconnects, re-sends `start` for the current session
 * and retries every unanswered request with the same id (and turnId: the
 * server stores a retried turn once and acks it `duplicate: true`).
 */
export class MemgateClient {
  private ws: ClientSocket | null = null;
  private ready = false;
  private closedByUser = false;
  private nextId = 1;
  private readonly pending = new Map<string, Pending>();
  private session: Required<StartParams> | null = null;
  private readonly handlers = new Map<string, Set<EventHandler>>();
  private readonly codec: ClientCodec;
  private readonly urls: readonly string[];
  /** The URL the current (or next) connection attempt uses: reconnects move on to the next. */
  private urlIndex = 0;
  private readonly timeoutMs: number;
  private attempt = 0;
  /** False until the first connection is restored: `connect()` reports that failure itself. */
  private everOpen = false;

  private constructor(private readonly opts: ConnectOptions) {
    this.codec = clientCodec(opts.encoding ?? 'json');
    const urls = typeof opts.url === 'string' ? [opts.url] : [...opts.url];
    if (urls.length === 0) throw new MemgateError('bad_request', 'url: give at least one server URL');
    this.urls = urls.map(wsUrl);
    this.timeoutMs = opts.requestTimeoutMs ?? 10_000;
  }

  private get url(): string {
    return this.urls[this.urlIndex]!;
  }

  /** Open a connection (trying each URL once, in order); rejects with `unauthorized` or `unavailable` when none answers. */
  static async connect(opts: ConnectOptions): Promise<MemgateClient> {
    const client = new MemgateClient(opts);
    for (;;) {
      try {
        await client.open();
        return client;
      } catch (err) {
        const final = err instanceof MemgateError && FINAL_CODES.has(err.code);
        if (final || client.urlIndex === client.urls.length - 1) {
          client.closedByUser = true;
          throw err;
        }
        client.urlIndex++;
      }
    }
  }

  /** The current call's session id (null before start and after end). */
  get sessionId(): string | null {
    return this.session?.sessionId ?? null;
  }

  /** Start the call: the preloaded context, ready for the system prompt. */
  async start(params: StartParams): Promise<ContextReply> {
    const sessionId = params.sessionId ?? `s_${randomUUID()}`;
    const reply = await this.request({ op: 'start', agentId: params.agentId, userId: params.userId, sessionId });
    this.session = { agentId: params.agentId, userId: params.userId, sessionId: reply['sessionId'] as string };
    return strip(reply) as unknown as ContextReply;
  }

  /** Append a turn; resolves once it is durable on the server. */
  async append(turn: AppendParams): Promise<AckReply> {
    const frame = compact({ op: 'append', ...turn, turnId: turn.turnId ?? `t_${randomUUID()}` });
    return strip(await this.request(frame)) as unknown as AckReply;
  }

  /** memory_search over the current call's user. */
  async search(query: string, params: SearchParams = {}): Promise<SearchReply> {
    return strip(await this.request(compact({ op: 'search', query, k: params.k, deadlineMs: params.deadlineMs }))) as unknown as SearchReply;
  }

  /** End the call (pending turns become eligible for extraction). */
  async end(): Promise<void> {
    await this.request({ op: 'end' });
    this.session = null;
  }

  /** Subscribe to live event topics of the key's tenant; resubscribed after a reconnect. */
  async subscribe(topics: string[], onEvent: EventHandler): Promise<string[]> {
    const reply = await this.request({ op: 'subscribe', topics });
    for (const t of topics) {
      let set = this.handlers.get(t);
      if (!set) this.handlers.set(t, (set = new Set()));
      set.add(onEvent);
    }
    return reply['topics'] as string[];
  }

  /** Close for good: unanswered requests reject with `unavailable`. */
  async close(): Promise<void> {
    this.closedByUser = true;
    this.failAll(new MemgateError('unavailable', 'client closed'));
    const ws = this.ws;
    this.ws = null;
    if (ws && !ws.closed) {
      await new Promise<void>((resolve) => {
        this.onSocketClosed = resolve;
        ws.close(1000);
      });
    }
    this.opts.onStateChange?.('closed');
  }

  private request(frame: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (this.closedByUser) return Promise.reject(new MemgateError('unavailable', 'client closed'));
    const id = String(this.nextId++);
    frame['id'] = id;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new MemgateError('unavailable', `request ${id} (${String(frame['op'])}) timed out after ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.set(id, { frame, resolve, reject, timer });
      // While reconnecting, the request waits in `pending` and is sent once the session is restored.
      if (this.ready) this.sendFrame(frame);
    });
  }

  private sendFrame(frame: Record<string, unknown>): void {
    this.ws?.send(this.codec.encode(frame), this.codec.binary);
  }

  /** Resolves `close()` once the socket it closed is gone. */
  private onSocketClosed: (() => void) | null = null;

  /** One connection attempt; resolves when open and the session (if any) is restored. */
  private open(): Promise<void> {
    return new Promise((resolve, reject) => {
      const factory = this.opts.socket ?? defaultSocket;
      if (!factory) return reject(new MemgateError('internal', 'no WebSocket implementation: import memgate/client'));
      let opened = false;
      // A server that accepts TCP but never answers the upgrade would hold this attempt (and every request) forever.
      const handshake = setTimeout(() => {
        if (opened) return;
        reject(new MemgateError('unavailable', `no WebSocket handshake from ${this.url} within ${this.timeoutMs} ms`));
        ws.terminate();
      }, this.timeoutMs);
      const ws: ClientSocket = factory(this.url, this.opts.token, {
        refused: (status) => {
          const code: ErrorCode = status === 401 ? 'unauthorized' : status === 403 ? 'forbidden' : 'unavailable';
          reject(new MemgateError(code, `WebSocket upgrade refused with HTTP ${status}`, { retryable: code === 'unavailable' }));
        },
        error: (err) => {
          if (!opened) reject(new MemgateError('unavailable', `cannot connect to ${this.url}: ${err.message}`, { cause: err }));
        },
        message: (data, isBinary) => this.onMessage(data, isBinary),
        close: (code) => {
          clearTimeout(handshake);
          if (!opened) reject(new MemgateError('unavailable', `cannot connect to ${this.url}`));
          if (this.ws === ws) this.onDisconnect(code);
          else if (this.ws === null) {
            this.onSocketClosed?.();
            this.onSocketClosed = null;
          }
        },
        open: () => {
          clearTimeout(handshake);
          opened = true;
          this.restore(ws).then(
            () => {
              this.attempt = 0;
              this.everOpen = true;
              this.opts.onStateChange?.('open');
              resolve();
            },
            (err: unknown) => {
              // The close event drives the next attempt (or, before the first success, connect() rejects).
              ws.terminate();
              reject(err);
            },
          );
        },
      });
      this.ws = ws;
    });
  }

  /** After a (re)connect: restore the call, then resubscribe, then retry unanswered requests in order. */
  private async restore(ws: ClientSocket): Promise<void> {
    if (this.session) await this.direct(ws, { op: 'start', ...this.session });
    if (this.handlers.size > 0) await this.direct(ws, { op: 'subscribe', topics: [...this.handlers.keys()] });
    this.ready = true;
    // Map order is id order: retried requests keep their original order and ids.
    for (const p of this.pending.values()) if (p.frame['op'] !== '_restore') this.sendFrame(p.frame);
  }

  /** A request sent on this socket before `ready` (session restore); its reply is routed like any other. */
  private direct(ws: ClientSocket, frame: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = String(this.nextId++);
    frame['id'] = id;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new MemgateError('unavailable', `session restore timed out`));
      }, this.timeoutMs);
      // Not retried on its own: a new connection restores the session again.
      this.pending.set(id, { frame: { ...frame, op: '_restore' }, resolve, reject, timer });
      ws.send(this.codec.encode(frame), this.codec.binary);
    });
  }

  private onMessage(data: string | Uint8Array, isBinary: boolean): void {
    let msg: Record<string, unknown>;
    try {
      msg = this.codec.decode(data, isBinary) as Record<string, unknown>;
    } catch {
      return;
    }
    if (msg['op'] === 'event') {
      const topic = msg['topic'] as string;
      for (const h of this.handlers.get(topic) ?? []) h(msg['event'] as MemgateEvent, topic);
      return;
    }
    const id = msg['id'];
    const p = typeof id === 'string' ? this.pending.get(id) : undefined;
    if (!p) return;
    this.pending.delete(id as string);
    clearTimeout(p.timer);
    if (msg['op'] === 'error') p.reject(new MemgateError((msg['code'] as ErrorCode) ?? 'internal', String(msg['message'] ?? 'error')));
    else p.resolve(msg);
  }

  private onDisconnect(code: number): void {
    this.ready = false;
    // Restore requests belong to the dead socket; the next connection sends its own.
    for (const [id, p] of this.pending) if (p.frame['op'] === '_restore') this.settle(id, new MemgateError('unavailable', 'connection lost during restore'));
    if (this.closedByUser || !this.everOpen) return;
    const final = FINAL_CLOSES.get(code);
    if (final !== undefined) return this.giveUp(new MemgateError(final, `the server closed the connection with ${code}; not reconnecting`));
    // The next attempt goes to the next gateway (a draining one closed us with 1001 and refuses new sockets).
    this.urlIndex = (this.urlIndex + 1) % this.urls.length;
    const policy = this.opts.reconnect;
    if (policy === false) return this.failAll(new MemgateError('unavailable', 'connection lost'));
    if (this.attempt >= (policy?.retries ?? Infinity)) return this.failAll(new MemgateError('unavailable', 'connection lost; reconnect attempts exhausted'));
    this.opts.onStateChange?.('reconnecting');
    const delay = Math.min(policy?.maxDelayMs ?? 5000, (policy?.minDelayMs ?? 100) * 2 ** this.attempt++);
    setTimeout(() => {
      if (this.closedByUser) return;
      this.open().catch((err: MemgateError) => {
        // A refused key will not become valid by retrying, nor a session id someone else holds (a conflict
        // restoring the call); other failures retry on the close event.
        if (FINAL_CODES.has(err.code)) this.giveUp(err);
      });
    }, delay);
  }

  /** Stop reconnecting for good: every unanswered request rejects with `err`. */
  private giveUp(err: MemgateError): void {
    if (this.closedByUser) return;
    this.closedByUser = true;
    this.session = null;
    this.failAll(err);
    this.opts.onStateChange?.('closed');
  }

  private settle(id: string, err: MemgateError): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    p.reject(err);
  }

  private failAll(err: MemgateError): void {
    for (const id of [...this.pending.keys()]) this.settle(id, err);
  }
}

/** Replies without the envelope (`op`, `id`). */
function strip(reply: Record<string, unknown>): Record<string, unknown> {
  const { op: _op, id: _id, ...rest } = reply;
  return rest;
}
