import net from 'node:net';
import { MemgateError } from '../core/errors.ts';
import type { Config } from '../config/config-schema.ts';

/**
 * Before any client library connects (each retries on its own, with stack traces),
 * check that every server the profile needs accepts a connection and answers in
 * its own protocol, all at once, and fail with one line per server that does not.
 * A TCP connect alone is not enough: a wrong port (another service) or a
 * transparent proxy accepts it, and the client then retries for tens of seconds.
 */

type Kind = 'Redis' | 'NATS' | 'MongoDB' | 'Qdrant';

interface Target {
  name: Kind;
  url: string;
  host: string;
  port: number;
  /** What to send after connecting and how to recognise the server's answer; null: TCP only (TLS). */
  hello: Hello | null;
}

interface Hello {
  send: Buffer | null;
  /** Judge the bytes received so far (`ended`: the server closed): its own server, another one, or too few bytes yet. */
  judge(received: Buffer, ended: boolean): Verdict;
}

type Verdict = 'yes' | 'no' | 'more';

/** Judges by a prefix of `n` bytes. */
const prefix =
  (n: number, ok: (b: Buffer) => boolean) =>
  (b: Buffer, ended: boolean): Verdict =>
    b.length >= n ? (ok(b) ? 'yes' : 'no') : ended ? 'no' : 'more';

/** `PING` answers `+PONG`, or `-NOAUTH …`/`-ERR …` when a password is needed: both are Redis. */
const REDIS: Hello = { send: Buffer.from('PING\r\n'), judge: prefix(1, (b) => b[0] === 0x2b || b[0] === 0x2d) };
/** A NATS server speaks first: `INFO {...}`. */
const NATS: Hello = { send: null, judge: prefix(5, (b) => b.subarray(0, 5).toString('latin1') === 'INFO ') };
/** A reply to the OP_MSG `hello` below: opcode 2013 at byte 12. */
const MONGO: Hello = { send: mongoHello(), judge: prefix(16, (b) => b.readInt32LE(12) === 2013) };

/**
 * Any HTTP server answers `GET /`: Qdrant's root names itself (a short JSON the
 * server sends before closing the HTTP/1.0 exchange), or is 401/403 when it needs a key.
 */
function judgeQdrant(b: Buffer, ended: boolean): Verdict {
  const text = b.toString('latin1');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
  if (status === undefined) return b.length >= 12 || ended ? 'no' : 'more';
  if (status === '401' || status === '403' || (status === '200' && /qdrant/i.test(text))) return 'yes';
  return status === '200' && !ended && b.length < 4096 ? 'more' : 'no';
}

/** OP_MSG { hello: 1, $db: "admin" } built by hand (the probe runs before the driver loads). */
function mongoHello(): Buffer {
  const elements = Buffer.concat([Buffer.from([0x10]), Buffer.from('hello\0'), int32(1), Buffer.from([0x02]), Buffer.from('$db\0'), int32(6), Buffer.from('admin\0')]);
  const doc = Buffer.concat([int32(4 + elements.length + 1), elements, Buffer.from([0])]);
  const body = Buffer.concat([int32(0), Buffer.from([0]), doc]); // flagBits, section kind 0, the document
  return Buffer.concat([int32(16 + body.length), int32(1), int32(0), int32(2013), body]);
}

function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32LE(n);
  return b;
}

const DEFAULT_PORTS: Record<string, number> = { 'redis:': 6379, 'rediss:': 6379, 'nats:': 4222, 'tls:': 4222, 'mongodb:': 27017, 'http:': 80, 'https:': 443 };

const TLS = /^(rediss|tls|https):$|[?&](tls|ssl)=true\b/;

function target(name: Kind, url: string, options: { qdrantApiKey?: string | undefined; mongoTls?: boolean } = {}): Target | null {
  try {
    const u = new URL(url.includes('://') ? url : `nats://${url}`);
    const port = u.port ? Number(u.port) : DEFAULT_PORTS[u.protocol];
    // mongodb+srv and other DNS-discovered deployments are left to their driver.
    if (port === undefined || u.hostname === '') return null;
    const host = u.hostname.replace(/^\[|\]$/g, '');
    // Behind TLS the server's first bytes are a handshake: only the TCP connect is checked.
    const tls = TLS.test(u.protocol) || options.mongoTls === true;
    return { name, url, host, port, hello: tls ? null : helloFor(name, u, options.qdrantApiKey) };
  } catch {
    return null;
  }
}

function helloFor(name: Kind, u: URL, qdrantApiKey: string | undefined): Hello {
  switch (name) {
    case 'Redis':
      return REDIS;
    case 'NATS':
      return NATS;
    case 'MongoDB':
      return MONGO;
    case 'Qdrant': {
      const key = qdrantApiKey ? `api-key: ${qdrantApiKey}\r\n` : '';
      const path = u.pathname.endsWith('/') ? u.pathname : `${u.pathname}/`;
      return { judge: judgeQdrant, send: Buffer.from(`GET ${path} HTTP/1.0\r\nHost: ${u.host}\r\n${key}\r\n`) };
    }
  }
}

/** The servers a configuration connects to. */
export function serversOf(config: Config): Target[] {
  const a = config.adapters;
  const out: Array<Target | null> = [];
  if (a.buffer === 'redis' || a.cache === 'redis' || a.lock === 'redis') out.push(target('Redis', config.redis.url));
  if (a.bus === 'nats' || a.events === 'nats') for (const s of config.nats.servers.split(',')) out.push(target('NATS', s.trim()));
  const mongoTls = TLS.test(config.mongo.url);
  if (a.documents === 'mongo' || a.cold === 'mongo') for (const h of mongoHosts(config.mongo.url)) out.push(target('MongoDB', h, { mongoTls }));
  if (a.acus === 'qdrant') out.push(target('Qdrant', config.qdrant.url, { qdrantApiKey: config.qdrant.apiKey }));
  return out.filter((t): t is Target => t !== null);
}

/** A mongodb:// URL may list several hosts: `mongodb://a:1,b:2/db`. */
function mongoHosts(url: string): string[] {
  const m = /^mongodb:\/\/(?:[^@/]*@)?([^/?]+)/.exec(url);
  return m ? m[1]!.split(',').map((h) => `mongodb://${h}`) : [];
}

function reach(t: Target, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: t.host, port: t.port });
    let settled = false;
    const done = (problem: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(problem);
    };
    // One deadline for the connect and the answer (setTimeout on the socket would restart on every byte).
    const timer = setTimeout(() => done(connected ? `accepts connections but does not answer as ${t.name} within ${timeoutMs} ms` : `no answer within ${timeoutMs} ms`), timeoutMs);
    let connected = false;
    let received = Buffer.alloc(0);
    const judge = (ended: boolean) => {
      const verdict = t.hello!.judge(received, ended);
      if (verdict === 'yes') done(null);
      else if (verdict === 'no')
        done(received.length > 0 ? `answers, but not as ${t.name} (${JSON.stringify(preview(received))}): is this the right port?` : `closed the connection without answering as ${t.name}`);
    };
    sock.once('connect', () => {
      connected = true;
      if (!t.hello) return done(null);
      if (t.hello.send) sock.write(t.hello.send);
    });
    sock.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      judge(false);
    });
    sock.once('end', () => judge(true));
    sock.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
}

function preview(b: Buffer): string {
  return b
    .subarray(0, 24)
    .toString('latin1')
    .replace(/[^\x20-\x7e]/g, '.');
}

/** Each server the configuration uses, probed now (`/v1/health`): host and port only, never credentials. */
export async function reachability(config: Config, timeoutMs = 1_000): Promise<Array<{ server: string; address: string; ok: boolean; problem: string | null; ms: number }>> {
  const targets = serversOf(config);
  return Promise.all(
    targets.map(async (t) => {
      const t0 = performance.now();
      const problem = await reach(t, timeoutMs);
      return { server: t.name, address: `${t.host}:${t.port}`, ok: problem === null, problem, ms: Math.round((performance.now() - t0) * 10) / 10 };
    }),
  );
}

/** Throw `unavailable` naming every unreachable server (one per line) within `timeoutMs`. */
export async function probeServers(config: Config, timeoutMs = 3_000): Promise<void> {
  const targets = serversOf(config);
  const problems = await Promise.all(targets.map((t) => reach(t, timeoutMs)));
  const lines = targets.flatMap((t, i) => (problems[i] ? [`  ${t.name} at ${t.url}: ${problems[i]}`] : []));
  if (lines.length > 0)
    throw new MemgateError('unavailable', `cannot reach ${lines.length === 1 ? 'a server' : `${lines.length} servers`} the "${config.profile}" profile needs:\n${lines.join('\n')}`);
}
