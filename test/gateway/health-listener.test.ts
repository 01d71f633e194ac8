import { connect, createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.ts';
import { startTestServer, type TestServer } from './support/real-server.ts';

/**
 * uWebSockets.js v20.30 parses only HTTP/1.1 request lines, so an HTTP/1.0
 * health check (HAProxy's default) on the main port is never answered. The
 * optional health port answers any version.
 */
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ config: { server: { healthPort: 0 } } });
});
afterAll(() => srv.close());

/** Send raw bytes and collect everything until the server closes the connection. */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const s = connect(port, '127.0.0.1', () => s.write(request));
    s.setEncoding('utf8');
    s.on('data', (d: string) => (out += d));
    s.on('close', () => resolve(out));
    s.on('error', reject);
  });
}

describe('health port', () => {
  it('answers HTTP/1.0 health checks (HAProxy: OPTIONS / HTTP/1.0) and closes', async () => {
    const port = srv.gateway.healthPort!;
    expect(port).toBeGreaterThan(0);
    expect(port).not.toBe(srv.gateway.port);
    const haproxy = await raw(port, 'OPTIONS / HTTP/1.0\r\n\r\n');
    expect(haproxy).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(haproxy.endsWith('{"status":"ok"}')).toBe(true);
    expect(await raw(port, 'GET /healthz HTTP/1.0\r\nHost: lb\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*\{"status":"ok"\}$/);
    expect(await raw(port, 'HEAD /healthz HTTP/1.1\r\nHost: lb\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(await raw(port, 'GET /v1/agents/a/users/u/turns HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.1 404 /);
  });

  it('is off unless configured, and MEMGATE_HEALTH_PORT sets it', async () => {
    const plain = await startTestServer();
    try {
      expect(plain.gateway.healthPort).toBeNull();
    } finally {
      await plain.close();
    }
    expect(loadConfig([], { MEMGATE_HEALTH_PORT: '7811' }).server.healthPort).toBe(7811);
  });

  it('a busy health port fails the start with a message naming it and the variable', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const busy = (blocker.address() as AddressInfo).port;
    try {
      await expect(startTestServer({ config: { server: { healthPort: busy } } })).rejects.toThrow(new RegExp(`${busy}.*MEMGATE_HEALTH_PORT`));
    } finally {
      blocker.close();
    }
  });
});
