/**
 * Debian's HAProxy in front of the cluster suite's gateways: the config the
 * README's "Running several gateways" section shows (round-robin, no
 * stickiness, WebSocket-friendly timeouts, health checks on each gateway's
 * health port), written to a temp file and run in the foreground so the test
 * owns the process.
 */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { closedPort } from '../../support/net.ts';
import { waitFor } from '../../support/wait.ts';

/** One gateway behind the balancer: its main port and its health port (`MEMGATE_HEALTH_PORT`). */
export interface Backend {
  name: string;
  port: number;
  healthPort: number;
}

/** A running HAProxy. */
export interface Haproxy {
  /** http://127.0.0.1:PORT: the one URL clients know. */
  readonly url: string;
  readonly output: string[];
  stop(): Promise<void>;
}

/** True when the `haproxy` binary is installed. */
export function haproxyInstalled(): boolean {
  return spawnSync('haproxy', ['-v'], { stdio: 'ignore' }).status === 0;
}

/**
 * The balancer config. `timeout tunnel` governs an upgraded WebSocket (a call
 * lasts minutes); `http-reuse never` keeps one client connection on one server
 * connection; a refused connection (a gateway that stopped listening while it
 * drains) is retried on another server (`retries` + `option redispatch`). The
 * health port answers 503 as soon as a gateway starts draining, so it leaves
 * the rotation before it closes its sockets.
 */
export function haproxyConfig(port: number, backends: readonly Backend[]): string {
  return [
    'global',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout tunnel 1h',
    '  timeout client-fin 5s',
    '  retries 3',
    '  option redispatch 1',
    '  http-reuse never',
    'frontend memgate',
    `  bind 127.0.0.1:${port}`,
    '  default_backend gateways',
    'backend gateways',
    '  balance roundrobin',
    '  option httpchk GET /healthz',
    '  http-check expect status 200',
    '  default-server inter 500ms fall 1 rise 2',
    ...backends.map((b) => `  server ${b.name} 127.0.0.1:${b.port} check port ${b.healthPort}`),
    '',
  ].join('\n');
}

/** Starts HAProxy on a free loopback port; resolves once every backend is up behind it. */
export async function startHaproxy(dir: string, backends: readonly Backend[]): Promise<Haproxy> {
  const port = await closedPort();
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, haproxyConfig(port, backends));
  // -db: foreground, no daemon; -W is not needed (no reloads).
  const child = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk: Buffer) => output.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  try {
    // Round-robin over healthy servers: as many 200s in a row as there are backends means every one answered.
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}):\n${output.join('\n')}`);
        for (let i = 0; i < backends.length * 2; i++) {
          const res = await fetch(`${url}/healthz`).catch(() => null);
          if (res?.status !== 200) return false;
        }
        return true;
      },
      15_000,
      'haproxy serving every gateway',
      100,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, output, stop };
}
