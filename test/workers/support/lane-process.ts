/**
 * A whole embedded runtime with its extraction thread, in a process of its own:
 * append, flush through the thread, close, and print what happened as one JSON
 * line. It never calls process.exit, so a handle left open by the lane keeps the
 * process alive and the spawning test sees it. Usage: lane-process.ts DB_PATH
 */
import { threadId } from 'node:worker_threads';
import { trace } from '@opentelemetry/api';
import { testConfig } from '../../support/config.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { createRuntime } from '../../../src/app/wiring.ts';

// Last argument: the script's own path is absent when it is imported from `node -e`.
const path = process.argv.at(-1);
if (!path?.endsWith('.db')) throw new Error('usage: lane-process.ts DB_PATH');
const runtime = await createRuntime(testConfig({ sqlite: { path }, log: { level: 'silent' } }), { logger: silentLogger });
runtime.startWorkers();
const scope = { tenantId: 'lane-process', agentId: 'real-estate', userId: `u-${process.pid}` };
const { sessionId } = await runtime.service.startSession(scope);
for (const text of [
  'Hi, my name is Rajiv Kumar.',
  'My budget is around 50 lakhs.',
  'I applied for a loan with HDFC.',
  'I want a 3 BHK near Whitefield.',
  'Let us do the site visit on Monday.',
  'Thanks, bye.',
]) {
  await runtime.service.appendTurn(scope, sessionId, { role: 'user', text });
}
// In a span of its own: with a host SDK preloaded (thread-tracing.test.ts) the thread's run links to it; a no-op otherwise.
const report = await trace.getTracer('lane-process').startActiveSpan('lane-process.flush', async (span) => {
  try {
    return await runtime.service.flush(scope);
  } finally {
    span.end();
  }
});
const stats = runtime.extractionThread();
await runtime.close();
process.stdout.write(JSON.stringify({ mainThreadId: threadId, ran: report.ran, turnsRead: report.turnsRead, stats }) + '\n');
