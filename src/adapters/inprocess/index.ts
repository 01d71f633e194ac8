/** The embedded (in-process) bus, lock and event adapters. */
export { InProcessJobBus, type DeadLetter, type InProcessJobBusOptions } from './job-bus.ts';
export { InProcessUserLock } from './user-lock.ts';
export { InProcessEventBus } from './event-bus.ts';
