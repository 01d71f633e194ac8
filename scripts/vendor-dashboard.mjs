// Copy the dashboard's chart library (uPlot, pinned in package.json) from node_modules into
// dashboard/vendor/, which the gateway serves: the page loads nothing from a CDN and works
// offline. Run by `npm run build` (and so by `prepare` on npm ci / npm install).
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'package.json'));
const uplotDir = join(dirname(require.resolve('uplot/package.json')));
const out = join(root, 'dashboard', 'vendor');
mkdirSync(out, { recursive: true });
for (const f of ['uPlot.esm.js', 'uPlot.min.css']) copyFileSync(join(uplotDir, 'dist', f), join(out, f));
copyFileSync(join(uplotDir, 'LICENSE'), join(out, 'uPlot.LICENSE'));
