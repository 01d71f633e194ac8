import type { ExtractionPorts } from '../ports/index.ts';

/** How the extraction thread cuts its bulk writes. */
export interface YieldingWritesOptions {
  /** Rows per transaction (~1 ms of SQLite work each). */
  rows: number;
  /** Pause between two transactions, long enough for a waiting writer's busy-retry to get in. */
  pauseMs: number;
}

/** Measured on the embedded default (see thread-lane.ts): ~1 ms per 32 rows, appends wait ≤ ~3 ms. */
export const DEFAULT_YIELDING_WRITES: Readonly<YieldingWritesOptions> = { rows: 32, pauseMs: 3 };

/**
 * The pipeline's bulk writes (ACU upsert, cold archive, buffer removal) as a
 * series of short transactions with a pause between them, for the extraction
 * thread. SQLite has one write lock per file: while the thread holds it, the
 * gateway's turn append waits in SQLite's busy handler, which sleeps the event
 * loop (1, 2, 5, 10 ms … as the wait grows). One 300-turn window archived in a
 * single transaction held the lock ~15 ms and stalled appends up to 100 ms
 * under load; in 32-row pieces an append waits a few ms at most.
 *
 * Safe because each of these writes is idempotent per row and the pipeline is
 * built for a run dying between any two of them: ACUs upsert by id, cold turns
 * by turnId, and a removal cut short is finished by the next run (see
 * `committedWindowLeftovers`). Everything else passes through unchanged.
 */
export function yieldingWrites<P extends ExtractionPorts>(ports: P, options: YieldingWritesOptions = DEFAULT_YIELDING_WRITES): P {
  const { acus, cold, buffer } = ports;
  return {
    ...ports,
    acus: override(acus, { upsert: (scope, items) => inPieces(items, options, (part) => acus.upsert(scope, part)) }),
    cold: override(cold, { archive: (scope, turns) => inPieces(turns, options, (part) => cold.archive(scope, part)) }),
    buffer: override(buffer, { remove: (scope, turnIds) => inPieces(turnIds, options, (part) => buffer.remove(scope, part)) }),
  };
}

/** `target` with `methods` replaced; every other member is the target's own (methods bound to it). */
export function override<T extends object>(target: T, methods: Partial<T>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (Object.hasOwn(methods, prop)) return methods[prop as keyof T];
      const value: unknown = Reflect.get(t, prop, t);
      return typeof value === 'function' ? value.bind(t) : value;
    },
  });
}

async function inPieces<T>(items: readonly T[], options: YieldingWritesOptions, write: (part: readonly T[]) => Promise<void>): Promise<void> {
  if (items.length <= options.rows) return write(items);
  for (let i = 0; i < items.length; i += options.rows) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    await write(items.slice(i, i + options.rows));
  }
}
