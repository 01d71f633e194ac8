#!/usr/bin/env node
// Runs the TypeScript sources through tsx so `npx memgate` / `npm exec memgate` work without a build step.
import { register } from 'tsx/esm/api';
register();
await import('../src/app/main.ts');
