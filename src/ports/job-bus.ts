import type { Scope } from '../core/types.ts';

/** One extraction job = one user's compression window (or, when the user is behind, everything buffered up to the run cap). */
export interface ExtractionJob {
  scope: Scope;
  /** `backlog`: a run left turns past its cap; this job takes the next of them. `encode`: ACUs indexed while the lane was behind wait for the full embedder. */
  reason: 'threshold' | 'end' | 'flush' | 'backlog' | 'encode';
  requestedAt: number;
}

/** How a consumer reports a failed delivery. */
export interface JobControl {
  /** 1 on first delivery. */
  readonly attempt: number;
}

export interface ConsumeOptions {
  /** Deliveries before a job goes to the dead-letter subject. */
  maxDeliver: number;
  /** Delay before a failed job is redelivered. */
  retryDelayMs: number;
  /** Jobs one consumer runs at once. */
  concurrency: number;
}

/** A running consumer; `stop` waits for in-flight jobs. */
export interface Consumer {
  stop(): Promise<void>;
}

/**
 * The extraction job bus. At most one pending job per user (dedup by scope);
 * a job is acked only after its handler resolves; a throw redelivers after
 * `retryDelayMs` until `maxDeliver`, then dead-letters (and the turns stay buffered).
 */
export interface JobBus {
  /** Returns false when an identical job for the user was already pending (deduplicated). */
  publish(job: ExtractionJob): Promise<boolean>;
  consume(handler: (job: ExtractionJob, ctl: JobControl) => Promise<void>, options: ConsumeOptions): Consumer;
  /** Jobs waiting or in flight, for metrics. */
  depth(): Promise<number>;
  /**
   * Put up to `limit` dead-lettered jobs back on the queue (oldest first) and drop
   * their dead letters; returns how many moved. Safe to race: a job moves once.
   */
  requeueDeadLetters(limit: number): Promise<number>;
  close(): Promise<void>;
}

/** Deterministic job key: the unit of deduplication. */
export function jobKey(scope: Scope): string {
  return `${scope.tenantId}/${scope.agentId}/${scope.userId}`;
}
