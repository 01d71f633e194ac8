import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemgateError } from '../core/errors.ts';

/**
 * A plain node:http listener for load-balancer health checks (`server.healthPort`).
 * uWebSockets.js v20.30's parser takes only HTTP/1.1 request lines: an HTTP/1.0
 * request (HAProxy's default `option httpchk`) never reaches the application and
 * waits for uWS's idle timeout. This port answers any HTTP version: `/` and
 * `/healthz` with 200 `{"status":"ok"}` (503 `{"status":"draining"}` once shutdown
 * starts), anything else 404. It carries no data and needs no key.
 */
export interface HealthListener {
  readonly port: number;
  close(): Promise<void>;
}

export function startHealthListener(host: string, port: number, draining: () => boolean): Promise<HealthListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const known = path === '/' || path === '/healthz';
    const status = !known ? 404 : draining() ? 503 : 200;
    const body = !known ? '{"error":{"code":"not_found","message":"health port: only / and /healthz"}}' : draining() ? '{"status":"draining"}' : '{"status":"ok"}';
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  server.headersTimeout = 5_000;
  server.requestTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', (err) =>
      reject(new MemgateError('unavailable', `cannot listen for health checks on ${host}:${port} (${(err as Error).message}); choose another with MEMGATE_HEALTH_PORT`, { cause: err })),
    );
    server.listen({ host, port, exclusive: true }, () => {
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
