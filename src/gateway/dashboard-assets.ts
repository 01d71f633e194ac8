import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
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
  // A checkout whose build has not run yet (npm ci --ignore-scripts): serve uPlot from node_modules.
  for (const [rel, file] of [
    ['vendor/uPlot.esm.js', 'dist/uPlot.esm.js'],
    ['vendor/uPlot.min.css', 'dist/uPlot.min.css'],
  ] as const) {
    if (out.has(rel)) continue;
    try {
      const path = join(dirname(requireHere.resolve('uplot/package.json')), file);
      out.set(rel, { type: TYPES[extname(path)]!, body: readFileSync(path) });
    } catch {
      // Not installed either: the page says the charts are missing in the browser console.
    }
  }
  return out;
}

const requireHere = createRequire(import.meta.url);

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
