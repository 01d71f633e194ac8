import net from 'node:net';
import { MemgateError } from '../core/errors.ts';
import type { Config } from '../config/schema.ts';

/**
 * Before any client library connects (each retries on its own, with stack traces),
 * check that every server the profile needs accepts a TCP connection, all at once,
 * and fail with one line per unreachable server.
 */

interface Target {
  name: string;
  url: string;
  host: string;
  port: number;
}

const DEFAULT_PORTS: Record<string, number> = { 'redis:': 6379, 'rediss:': 6379, 'nats:': 4222, 'tls:': 4222, 'mongodb:': 27017, 'http:': 80, 'https:': 443 };

function target(name: string, url: string): Target | null {
  try {
    const u = new URL(url.includes('://') ? url : `nats://${url}`);
    const port = u.port ? Number(u.port) : DEFAULT_PORTS[u.protocol];
    // mongodb+srv and other DNS-discovered deployments are left to their driver.
    if (port === undefined || u.hostname === '') return null;
    return { name, url, host: u.hostname.replace(/^\[|\]$/g, ''), port };
  } catch {
    return null;
  }
}

/** The servers a configuration connects to. */
export function serversOf(config: Config): Target[] {
  const a = config.adapters;
  const out: Array<Target | null> = [];
  if (a.buffer === 'redis' || a.cache === 'redis' || a.lock === 'redis') out.push(target('Redis', config.redis.url));
  if (a.bus === 'nats' || a.events === 'nats') for (const s of config.nats.servers.split(',')) out.push(target('NATS', s.trim()));
  if (a.documents === 'mongo' || a.cold === 'mongo') for (const h of mongoHosts(config.mongo.url)) out.push(target('MongoDB', h));
  if (a.acus === 'qdrant') out.push(target('Qdrant', config.qdrant.url));
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
    const done = (problem: string | null) => {
      sock.destroy();
      resolve(problem);
    };
    sock.setTimeout(timeoutMs, () => done(`no answer within ${timeoutMs} ms`));
    sock.once('connect', () => done(null));
    sock.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
}

/** Throw `unavailable` naming every unreachable server (one per line) within `timeoutMs`. */
export async function probeServers(config: Config, timeoutMs = 3_000): Promise<void> {
  const targets = serversOf(config);
  const problems = await Promise.all(targets.map((t) => reach(t, timeoutMs)));
  const lines = targets.flatMap((t, i) => (problems[i] ? [`  ${t.name} at ${t.url}: ${problems[i]}`] : []));
  if (lines.length > 0)
    throw new MemgateError('unavailable', `cannot reach ${lines.length === 1 ? 'a server' : `${lines.length} servers`} the "${config.profile}" profile needs:\n${lines.join('\n')}`);
}
