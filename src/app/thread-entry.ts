import { parentPort, threadId, workerData } from 'node:worker_threads';
import { context } from '@opentelemetry/api';
import { toMemgateError } from '../core/errors.ts';
import { contextFrom } from '../core/tracing.ts';
import { createLogger } from '../core/logger.ts';
import { systemClock } from '../core/clock.ts';
import { extractionDeps, runExtractionWhenFree } from '../pipeline/extraction-job.ts';
import { InProcessEventBus } from '../adapters/inprocess/index.ts';
import { SchemaRegistry } from '../service/schema-registry.ts';
import { openStores } from './wiring.ts';
import type { FromThread, ThreadLaneData, ToThread, WireError } from '../workers/thread-protocol.ts';
import { override, yieldingWrites } from '../workers/yielding-writes.ts';
import { lowerThreadPriority } from '../workers/thread-priority.ts';
import { borrowFromGateway } from '../workers/gateway-loans.ts';

/**
 * The extraction thread (see thread-lane.ts): the stores a run needs, opened on the
 * same SQLite file through the runtime's own builder (its own connection; WAL lets it
 * write while the gateway appends), serving `run` requests with the ordinary pipeline.
 * Every run of the process goes through this thread, so its in-process user lock is
 * the only one extractions take: a flush and a job of the same user never overlap.
 */
if (!parentPort) throw new Error('thread-entry.ts runs only as the extraction worker thread');
const port = parentPort;
const { config, encoderLent, removalsLent } = workerData as ThreadLaneData;
const post = (message: FromThread) => port.postMessage(message);

const logger = createLogger(config.log.level, { service: 'memgate', component: 'extraction-thread', threadId });
// First, so even opening the stores (loading the embedding model) yields the cores to the call path.
const priority = await lowerThreadPriority(config.worker.niceness, config.worker.idlePolicy);
if (priority.error) logger.warn('extraction thread priority not fully lowered', { niceness: priority.niceness, policy: priority.policy, reason: priority.error });
const clock = systemClock;
// Only what a run needs: the stores, the lock, the extractor, the embedder and the ACU index (no bus, no service).
const closers: Array<() => Promise<void>> = [];
const lent = borrowFromGateway(post);
const opened = await openStores(config, clock, logger, closers, true, encoderLent ? lent.model : undefined);
const stores = removalsLent ? { ...opened, buffer: override(opened.buffer, { remove: (scope, turnIds) => lent.remove(scope, turnIds) }) } : opened;
// The pipeline publishes here; the gateway re-publishes on its own bus (dashboards, /metrics, flush reports).
const events = new InProcessEventBus();
events.subscribe((event) => post({ kind: 'event', event }));
const schemas = new SchemaRegistry(stores.documents, config.schemasDir, logger);
// Bulk writes in short transactions, so the gateway's appends never wait long for the write lock.
const deps = extractionDeps(config, yieldingWrites({ ...stores, events }), (t, a) => schemas.get(t, a), clock, logger.child({ component: 'pipeline' }));

const inFlight = new Set<Promise<void>>();
let stopping = false;

// Runs posted while the runtime was opening were queued by the port: they are served now.
port.on('message', (message: ToThread) => {
  if (message.kind === 'stop') {
    void stop();
    return;
  }
  if (message.kind === 'answered' || message.kind === 'refused') {
    lent.settle(message);
    return;
  }
  const { id, scope, maxWaitMs, mode, trace } = message;
  if (stopping) {
    post({ kind: 'failed', id, error: { code: 'unavailable', message: 'extraction thread is stopping', retryable: true } });
    return;
  }
  // Under the asking span's context, so the run's span links to it (spans here need the host's SDK registered in this thread too).
  const run = context
    .with(contextFrom(trace), () => runExtractionWhenFree(deps, scope, maxWaitMs, mode))
    .then(
      (report) => post({ kind: 'done', id, report, threadId }),
      (err: unknown) => post({ kind: 'failed', id, error: wireError(err) }),
    );
  inFlight.add(run);
  void run.finally(() => inFlight.delete(run));
});
post({ kind: 'ready', threadId, tid: priority.tid, niceness: priority.niceness, policy: priority.policy });

/** Let in-flight runs commit, close the stores, then let the thread end (nothing keeps it alive). */
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await Promise.allSettled([...inFlight]);
  for (const close of closers.reverse()) {
    try {
      await close();
    } catch (err) {
      post({ kind: 'close-failed', error: wireError(err) });
    }
  }
  port.close();
}

function wireError(err: unknown): WireError {
  const e = toMemgateError(err);
  return { code: e.code, message: e.message, retryable: e.retryable };
}
