// The dashboard's link to the gateway: HTTP reads with the tenant's key, and one
// WebSocket subscribed to the tenant's `events` topic. Every event carries a
// per-subscription `seq`; a `dropped` notice or a gap in `seq` is reported to
// `onGap` so the page can show it and re-read state over HTTP.

const KEY = 'memgate.key';

export function storedKey() {
  return sessionStorage.getItem(KEY) ?? '';
}

export function storeKey(key) {
  if (key) sessionStorage.setItem(KEY, key);
  else sessionStorage.removeItem(KEY);
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export class Api {
  constructor(key) {
    this.key = key;
  }

  async request(method, path, body) {
    const headers = {};
    if (this.key) headers['authorization'] = `Bearer ${this.key}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = null;
    }
    if (!res.ok) throw new ApiError(res.status, json?.error?.code ?? 'http', json?.error?.message ?? `HTTP ${res.status}`);
    return json;
  }

  get(path) {
    return this.request('GET', path);
  }

  post(path, body) {
    return this.request('POST', path, body);
  }
}

/**
 * The live event stream. Reconnects with backoff; after every (re)connect the
 * page re-reads state (`onResync`), since events during the outage are gone.
 */
export class EventStream {
  constructor(key, { onEvent, onGap, onState, onResync }) {
    this.key = key;
    this.onEvent = onEvent;
    this.onGap = onGap;
    this.onState = onState;
    this.onResync = onResync;
    this.lastSeq = new Map();
    this.ws = null;
    this.stopped = false;
    this.backoff = 500;
    this.received = 0;
  }

  start() {
    this.stopped = false;
    this.connect();
  }

  stop() {
    this.stopped = true;
    this.ws?.close();
  }

  connect() {
    const url = new URL('/v1/ws', location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    if (this.key) url.searchParams.set('token', this.key);
    const ws = new WebSocket(url);
    this.ws = ws;
    this.onState('connecting');
    ws.onopen = () => {
      this.backoff = 500;
      this.lastSeq.clear();
      ws.send(JSON.stringify({ op: 'subscribe', id: 'dash-sub', topics: ['events'] }));
    };
    ws.onmessage = (m) => {
      let f;
      try {
        f = JSON.parse(m.data);
      } catch {
        return;
      }
      if (f.op === 'subscribed') {
        this.onState('live');
        this.onResync('connected');
      } else if (f.op === 'event') this.event(f);
      else if (f.op === 'dropped') {
        // The server skipped fromSeq..toSeq for this topic: account for them, then re-read.
        this.lastSeq.set(f.topic, f.toSeq);
        this.onGap({ topic: f.topic, count: f.count, fromSeq: f.fromSeq, toSeq: f.toSeq, source: 'dropped' });
      } else if (f.op === 'error') this.onState('down', f.message);
    };
    ws.onclose = () => {
      this.onState('down');
      if (this.stopped) return;
      setTimeout(() => this.connect(), this.backoff);
      this.backoff = Math.min(this.backoff * 2, 10_000);
    };
  }

  event(f) {
    this.received++;
    const last = this.lastSeq.get(f.topic) ?? 0;
    this.lastSeq.set(f.topic, f.seq);
    // A gap the server did not announce (should not happen; still never silent).
    if (f.seq > last + 1) this.onGap({ topic: f.topic, count: f.seq - last - 1, fromSeq: last + 1, toSeq: f.seq - 1, source: 'seq' });
    this.onEvent(f.event, f.seq);
  }
}
