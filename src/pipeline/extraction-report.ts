import type { MemgateError } from '../core/errors.ts';
import type { Scope } from '../core/types.ts';
import type { MemgateEvent } from '../core/wire.ts';

// The pipeline owns its report; the service API hands it on (flush reply, events, logs).

/** Wall time of one run's stages, in milliseconds (0 for a stage the run did not reach). */
export interface StageTimings {
  /** Buffer and hot document read, leftovers of a crashed commit removed, defective turns set aside, the run's turns chosen. */
  read: number;
  /** Facts extracted and resolved, the window compressed into ACUs, the next hot document built: no write yet. */
  plan: number;
  /** ACUs, cold turns, the hot document (compare-and-set), buffer removal, context cache. */
  commit: number;
}

/** What one extraction run did (flush reply, events, logs). */
export interface ExtractionReport {
  ran: boolean;
  /** Why nothing ran, when `ran` is false: "empty" (nothing buffered), "up-to-date" (every buffered turn was already extracted), "locked". */
  skipped?: string;
  turnsRead: number;
  turnsKept: number;
  turnsArchived: number;
  /** Stored turns set aside because extraction cannot process them (see `quarantined`). */
  turnsQuarantined: number;
  /** Buffered turns past the run's size cap (worker.maxRunWindows), left for the next run. */
  turnsLeft: number;
  /** seq of the newest turn extracted (0 when none): every buffered turn up to it has been read. */
  readThroughSeq: number;
  factsExtracted: number;
  entitiesInserted: number;
  entitiesSuperseded: number;
  entitiesRetracted: number;
  profileUpdated: number;
  acusIndexed: number;
  acusSuppressed: number;
  /** Of `acusIndexed`, those indexed with the embedder's cheap vector because the lane was behind (pipeline/deferred-acus.ts). */
  acusDeferred: number;
  /** Deferred ACUs of earlier runs re-embedded with the full embedder. */
  acusUpgraded: number;
  /** The user's ACUs still waiting for the full embedder after this run. */
  acusAwaitingEncoder: number;
  /** The hot document version the run read; `version` is the one it left (equal when it committed nothing). */
  baseVersion: number;
  version: number;
  durationMs: number;
  stageMs: StageTimings;
}

const COUNTS = [
  'turnsRead',
  'turnsKept',
  'turnsArchived',
  'turnsQuarantined',
  'factsExtracted',
  'entitiesInserted',
  'entitiesSuperseded',
  'entitiesRetracted',
  'profileUpdated',
  'acusIndexed',
  'acusSuppressed',
  'acusDeferred',
  'acusUpgraded',
  'durationMs',
] as const;

/** A report of nothing done, for `reason` (versions 0 = not read). */
export function skippedReport(reason: string, extra: Partial<ExtractionReport> = {}): ExtractionReport {
  return {
    ran: false,
    skipped: reason,
    turnsRead: 0,
    turnsKept: 0,
    turnsArchived: 0,
    turnsQuarantined: 0,
    turnsLeft: 0,
    readThroughSeq: 0,
    factsExtracted: 0,
    entitiesInserted: 0,
    entitiesSuperseded: 0,
    entitiesRetracted: 0,
    profileUpdated: 0,
    acusIndexed: 0,
    acusSuppressed: 0,
    acusDeferred: 0,
    acusUpgraded: 0,
    acusAwaitingEncoder: 0,
    baseVersion: 0,
    version: 0,
    durationMs: 0,
    stageMs: { read: 0, plan: 0, commit: 0 },
    ...extra,
  };
}

/**
 * Several runs for one user (in commit order) as one report: what a flush answers when it
 * waited for a run in progress and then extracted what was left. Counts and times add up;
 * baseVersion is the first run's, version, readThroughSeq, turnsLeft and acusAwaitingEncoder the last state;
 * `skipped` stays only if no run ran.
 */
export function mergeReports(reports: readonly ExtractionReport[]): ExtractionReport {
  if (reports.length === 1) return reports[0]!;
  const ran = reports.filter((r) => r.ran);
  if (ran.length === 0) return reports[reports.length - 1] ?? skippedReport('empty');
  const out = skippedReport('');
  delete out.skipped;
  out.ran = true;
  for (const r of reports) {
    for (const k of COUNTS) out[k] += r[k];
    out.stageMs.read += r.stageMs.read;
    out.stageMs.plan += r.stageMs.plan;
    out.stageMs.commit += r.stageMs.commit;
    out.version = Math.max(out.version, r.version);
    out.readThroughSeq = Math.max(out.readThroughSeq, r.readThroughSeq);
  }
  out.turnsLeft = reports[reports.length - 1]!.turnsLeft;
  out.acusAwaitingEncoder = reports[reports.length - 1]!.acusAwaitingEncoder;
  out.baseVersion = Math.min(...reports.map((r) => r.baseVersion));
  return out;
}

/**
 * The `extraction.failed` event of a run that threw: a worker's job (`attempt` of the bus's
 * delivery) or a flush (`flush: true`: the caller got the error; nothing is redelivered).
 */
export function extractionFailedEvent(scope: Scope, err: MemgateError, at: number, run: { attempt: number } | { flush: true }): MemgateEvent {
  const { tenantId, agentId, userId } = scope;
  const how = 'flush' in run ? { attempt: 1, flush: true } : { attempt: run.attempt };
  return { type: 'extraction.failed', tenantId, agentId, userId, at, data: { code: err.code, ...how, retryable: err.retryable, message: err.message.slice(0, 300) } };
}
