import type { ErrorCode } from '../core/errors.ts';
import type { WireSpanContext } from '../core/tracing.ts';
import type { Scope } from '../core/types.ts';
import type { Config } from '../config/config-schema.ts';
import type { MemgateEvent } from '../ports/event-bus.ts';
import type { ExtractionReport } from '../service/api.ts';
import type { SemanticMode } from '../pipeline/deferred-acus.ts';

/**
 * Messages between the gateway thread and its extraction thread. Only plain
 * data crosses (structured clone): errors travel as their stable code, message
 * and retryability, and are rebuilt as MemgateError on the other side.
 */

/** What the thread is started with (`workerData`). */
export interface ThreadLaneData {
  config: Config;
  /** URL of tsx's `esm/api`, registered before the entry is imported (TypeScript sources); null when compiled. */
  loader: string | null;
  /** URL of the thread's entry module. */
  entry: string;
  /** The gateway lends its sentence encoder (`encode` messages): the thread loads no model of its own. */
  encoderLent: boolean;
  /** The gateway removes extracted turns from the buffer (`remove` messages): the thread never writes the append's file. */
  removalsLent: boolean;
  /**
   * The process's own `--import` preloads (a host's OpenTelemetry SDK, say), imported before the entry:
   * Node 20 does not run them in an `eval` worker. Specifiers as given, resolved from the working directory.
   */
  preloads: string[];
}

/** Gateway → thread. */
export type ToThread =
  /**
   * Extract the user's buffered turns (a bus job or an explicit flush: the same run), waiting up to `maxWaitMs` for the user's lock.
   * `trace`: the span active where the run was asked for (the thread's run span links to it), null when none.
   */
  | { kind: 'run'; id: number; scope: Scope; maxWaitMs: number; mode: SemanticMode; trace: WireSpanContext | null }
  /** Take no more runs, let the in-flight ones commit, close the runtime, exit. */
  | { kind: 'stop' }
  /** The answer to an `encode` (one raw vector per text, in order) or a `remove` (no vectors). */
  | { kind: 'answered'; id: number; vectors?: Float32Array[] }
  /** Why an `encode` or a `remove` was not done. */
  | { kind: 'refused'; id: number; error: WireError };

/** A failure as it crosses the thread boundary. */
export interface WireError {
  code: ErrorCode;
  message: string;
  retryable: boolean;
}

/** Thread → gateway. */
export type FromThread =
  /** The runtime is open: runs can be served. `tid`/`niceness`/`policy`: the kernel thread, its nice value and scheduling policy (null where unknown). */
  | { kind: 'ready'; threadId: number; tid: number | null; niceness: number | null; policy: 'idle' | 'normal' | 'other' | null }
  /** An event the thread's pipeline raised, to publish on the gateway's event bus. */
  | { kind: 'event'; event: MemgateEvent }
  | { kind: 'done'; id: number; report: ExtractionReport; threadId: number }
  | { kind: 'failed'; id: number; error: WireError }
  /** Logged by the gateway: the thread's runtime failed to close cleanly (it still exits). */
  | { kind: 'close-failed'; error: WireError }
  /** Run the sentence encoder on these texts with the gateway's model (ThreadLaneOptions.encode): one copy of its weights per process. */
  | { kind: 'encode'; id: number; texts: string[] }
  /** Remove these turns from the user's buffer on the gateway's connection (ThreadLaneOptions.removeTurns): the append's file keeps one writer. */
  | { kind: 'remove'; id: number; scope: Scope; turnIds: string[] };
