/**
 * A scripted extraction thread for the lane's own tests: it speaks the real
 * protocol (thread-protocol.ts) without a runtime, and its behaviour is chosen
 * by the user id of each run. `config.sqlite.path` names a scratch directory
 * that survives the thread (so "crash once" is remembered across a restart).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parentPort, threadId, workerData } from 'node:worker_threads';
import type { ExtractionReport } from '../../../src/service/api.ts';
import { skippedReport } from '../../../src/pipeline/extraction-report.ts';
import type { FromThread, ThreadLaneData, ToThread } from '../../../src/workers/thread-protocol.ts';

if (!parentPort) throw new Error('fake-thread-entry runs only as a worker thread');
const port = parentPort;
const { config } = workerData as ThreadLaneData;
const post = (m: FromThread) => port.postMessage(m);

const report = (turnsRead: number): ExtractionReport => {
  const { skipped: _none, ...nothing } = skippedReport('');
  return { ...nothing, ran: true, turnsRead, turnsArchived: turnsRead, readThroughSeq: turnsRead, version: 1, durationMs: 1 };
};

port.on('message', (m: ToThread) => {
  if (m.kind === 'stop') {
    port.close();
    return;
  }
  if (m.kind !== 'run') return;
  const { id, scope } = m;
  const marker = join(config.sqlite.path, `crashed-${scope.userId}`);
  if (scope.userId.startsWith('crash-once') && !existsSync(marker)) {
    writeFileSync(marker, '');
    // An uncaught error, as a bug in the pipeline would raise it.
    throw new Error('scripted thread crash');
  }
  if (scope.userId.startsWith('fail')) {
    post({ kind: 'failed', id, error: { code: 'conflict', message: 'scripted conflict', retryable: true } });
    return;
  }
  if (scope.userId.startsWith('slow')) {
    // Never answers: close() must give up after its timeout and terminate the thread.
    setInterval(() => undefined, 1_000);
    return;
  }
  post({ kind: 'event', event: { type: 'extraction.started', ...scope, at: Date.now(), data: { turns: 3 } } });
  post({ kind: 'done', id, report: report(3), threadId });
});
post({ kind: 'ready', threadId, tid: null, niceness: null, policy: null });
