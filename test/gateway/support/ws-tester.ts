import { Packr, Unpackr } from 'msgpackr';
import WebSocket from 'ws';

const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, int64AsType: 'number' });

/** A decoded server frame plus the frame type it came in. */
export type Reply = Record<string, unknown> & { _binary: boolean };

/**
 * A raw WebSocket test client: sends frames in either encoding (or raw bytes)
 * and awaits replies by id, so tests see the exact wire behaviour.
 */
export class WsTester {
  readonly inbox: Reply[] = [];
  private waiters: Array<{ match: (r: Reply) => boolean; resolve: (r: Reply) => void }> = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private nextId = 1;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary) => {
      const r = { ...(isBinary ? unpackr.unpack(data) : JSON.parse(data.toString('utf8'))), _binary: isBinary } as Reply;
      const i = this.waiters.findIndex((w) => w.match(r));
      if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(r);
      else this.inbox.push(r);
    });
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  /** Connect to `url` (with an optional bearer header and more upgrade headers); rejects with the HTTP status on a refused upgrade. */
  static open(url: string, token?: string, headers: Record<string, string> = {}): Promise<WsTester> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: token ? { ...headers, authorization: `Bearer ${token}` } : headers, skipUTF8Validation: true });
      ws.once('open', () => resolve(new WsTester(ws)));
      ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })));
      ws.once('error', reject);
    });
  }

  /** Send a frame: JSON text, or MessagePack when `binary`. */
  send(frame: object, binary = false): void {
    this.ws.send(binary ? packr.pack(frame) : JSON.stringify(frame), { binary });
  }

  /** Send raw bytes as a text or binary frame. */
  sendRaw(bytes: Uint8Array | string, binary: boolean): void {
    this.ws.send(bytes, { binary });
  }

  /** Wait for the first (buffered or future) frame that matches. */
  waitFor(match: (r: Reply) => boolean, timeoutMs = 5000): Promise<Reply> {
    const i = this.inbox.findIndex(match);
    if (i >= 0) return Promise.resolve(this.inbox.splice(i, 1)[0]!);
    return new Promise((resolve, reject) => {
      const w = { match, resolve: (r: Reply) => (clearTimeout(t), resolve(r)) };
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error('timed out waiting for a frame'));
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  /** Send a request with a fresh id (unless it has one) and await the reply echoing it. */
  request(frame: Record<string, unknown>, binary = false): Promise<Reply> {
    const id = 'id' in frame ? frame['id'] : `r${this.nextId++}`;
    this.send({ ...frame, id }, binary);
    return this.waitFor((r) => r['id'] === id && r['op'] !== 'event');
  }

  close(): Promise<unknown> {
    this.ws.close();
    return this.closed;
  }
}

/** A JSON HTTP call: status and parsed body (text when not JSON). */
export async function http(
  base: string,
  method: string,
  path: string,
  opts: { body?: unknown; raw?: string | Uint8Array; token?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers['authorization'] = `Bearer ${opts.token}`;
  let body: string | Uint8Array | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // metrics and the like are text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}
