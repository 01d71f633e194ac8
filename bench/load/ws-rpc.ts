import WebSocket from 'ws';

/** A reply frame: `op` plus whatever the op carries. */
export type ReplyFrame = { op: string; id: number; [key: string]: unknown };

/**
 * A minimal request/reply WebSocket client for the bench's scripted calls
 * (LoCoMo streaming): JSON frames, numeric ids, replies matched by id, so
 * requests can be pipelined on one connection. An `error` reply rejects.
 */
export class WsRpc {
  private nextId = 1;
  private pushHandler: ((frame: ReplyFrame) => void) | null = null;
  private readonly pending = new Map<number, { resolve: (r: ReplyFrame) => void; reject: (e: Error) => void }>();

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString()) as ReplyFrame;
      const p = this.pending.get(msg.id);
      if (!p) {
        if (msg.op === 'event') this.pushHandler?.(msg);
        return;
      }
      this.pending.delete(msg.id);
      if (msg.op === 'error') p.reject(new Error(`${String(msg['code'])}: ${String(msg['message'])}`));
      else p.resolve(msg);
    });
    ws.on('close', () => {
      for (const p of this.pending.values()) p.reject(new Error('connection closed'));
      this.pending.clear();
    });
  }

  /** Open a connection (rejects on a failed handshake). */
  static connect(url: string): Promise<WsRpc> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      ws.once('open', () => resolve(new WsRpc(ws)));
      ws.once('error', reject);
    });
  }

  /** Receive pushed `event` frames (after a `subscribe`). */
  onEvent(handler: (frame: ReplyFrame) => void): void {
    this.pushHandler = handler;
  }

  /** Send one request and wait for its reply. */
  request(frame: Record<string, unknown>, timeoutMs = 60_000): Promise<ReplyFrame> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no reply to ${String(frame['op'])} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (r) => (clearTimeout(timer), resolve(r)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      this.ws.send(JSON.stringify({ ...frame, id }));
    });
  }

  /** Close and wait for the close handshake. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.ws.readyState === WebSocket.CLOSED) return resolve();
      this.ws.once('close', () => resolve());
      this.ws.close();
    });
  }
}
