export type * from './turn-buffer.ts';
export type * from './context-cache.ts';
export type * from './document-store.ts';
export type * from './cold-archive.ts';
export type * from './acu-index.ts';
export type * from './job-bus.ts';
export type * from './user-lock.ts';
export type * from './event-bus.ts';
export type * from './extractor.ts';
export type * from './embedder.ts';
export { jobKey } from './job-bus.ts';

import type { TurnBuffer } from './turn-buffer.ts';
import type { ContextCache } from './context-cache.ts';
import type { DocumentStore } from './document-store.ts';
import type { ColdArchive } from './cold-archive.ts';
import type { AcuIndex } from './acu-index.ts';
import type { JobBus } from './job-bus.ts';
import type { UserLock } from './user-lock.ts';
import type { EventBus } from './event-bus.ts';
import type { Extractor } from './extractor.ts';
import type { Embedder } from './embedder.ts';

/** Every port the service and the workers need; built by `src/app/wiring.ts` only. */
export interface Ports {
  buffer: TurnBuffer;
  cache: ContextCache;
  documents: DocumentStore;
  cold: ColdArchive;
  acus: AcuIndex;
  bus: JobBus;
  lock: UserLock;
  events: EventBus;
  extractor: Extractor;
  embedder: Embedder;
}

/** What one extraction run touches: every port but the job bus (jobs are the workers' business, not the run's). */
export type ExtractionPorts = Omit<Ports, 'bus'>;
