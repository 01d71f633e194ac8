import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HttpResponse } from 'uWebSockets.js';
import type { GatewayContext } from './context.ts';

/**
 * The live dashboard's static files (`GET /dashboard`): the package's
 * `dashboard/` folder (plain ES modules, and uPlot copied into `dashboard/vendor/`
 * from node_modules by `npm run build`). Read once, served from memory, no CDN:
 * the page works offline. The files hold no data: the page asks the API with
 * the key its user types in, like any client.
 */

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

// Same origin only: no CDN, no third-party connections; the WebSocket goes back to this gateway.
const CSP = "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/** `dashboard/` beside `src/` and `dist/` (this file is at src/gateway/ or dist/gateway/). */
export const DASHBOARD_DIR = fileURLToPath(new URL('../../dashboard/', import.meta.url));

interface Asset {
  type: string;
  body: Buffer;
}

let cache: Map<string, Asset> | null = null;

function load(dir: string): Map<string, Asset> {
  const out = new Map<string, Asset>();
  const walk = (rel: string) => {
    const abs = join(dir, rel);
    if (!existsSync(abs)) return;
    for (const name of readdirSync(abs)) {
      const r = rel ? `${rel}/${name}` : name;
      if (statSync(join(dir, r)).isDirectory()) walk(r);
      else if (TYPES[extname(name)]) out.set(r, { type: TYPES[extname(name)]!, body: readFileSync(join(dir, r)) });
    }
  };
  walk('');
  return out;
}

/** Serve `url` (`/dashboard`, `/dashboard/`, `/dashboard/app.js`, ...); false when it names no asset. */
export function serveDashboard(ctx: GatewayContext, res: HttpResponse, url: string): boolean {
  cache ??= load(DASHBOARD_DIR);
  const rel = url === '/dashboard' || url === '/dashboard/' ? 'index.html' : url.slice('/dashboard/'.length);
  const asset = cache.get(rel);
  if (!asset) return false;
  ctx.metrics.http.inc('200');
  res.cork(() => {
    res
      .writeStatus('200 OK')
      .writeHeader('content-type', asset.type)
      .writeHeader('cache-control', 'no-cache')
      .writeHeader('x-content-type-options', 'nosniff')
      .writeHeader('content-security-policy', CSP)
      .end(asset.body);
  });
  return true;
}

/** Whether the dashboard's page and its chart library are in place (a build copies uPlot). */
export function dashboardReady(): boolean {
  return existsSync(join(DASHBOARD_DIR, 'index.html')) && existsSync(join(DASHBOARD_DIR, 'vendor', 'uPlot.esm.js'));
}

/** Forget the loaded files (tests that rebuild them). */
export function reloadDashboard(): void {
  cache = null;
}
