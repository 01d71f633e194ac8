#!/usr/bin/env node
// Runs the compiled build (dist/, made by `npm run build`, which `npm install` runs on `prepare`)
// in this one process. A source checkout without a build falls back to the TypeScript sources via tsx.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/app/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  process.stderr.write('memgate: no build found (dist/), running the sources through tsx; `npm run build` makes it start faster\n');
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/app/main.ts');
}
