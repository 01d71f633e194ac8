import type { MemgateError } from '../core/errors.ts';
import type { Scope } from '../core/types.ts';
import type { MemgateEvent } from '../core/wire.ts';

// The pipeline owns its report; the service API hands it on (flush reply, events, logs).
/** What one extraction run did (flush reply, events, logs). */
export interface ExtractionReport {
  ran: boolean;
  /** Why nothing ran, when `ran` is false (e.g. "empty", "locked"). */
  skipped?: string;
  turnsRead: number;
  turnsKept: number;
  turnsArchived: number;
  /** Stored turns set aside because extraction cannot process them (see `quarantined`). */
  turnsQuarantined: number;
  factsExtracted: number;
  entitiesInserted: number;
  entitiesSuperseded: number;
  entitiesRetracted: number;
  profileUpdated: number;
  acusIndexed: number;
  acusSuppressed: number;
  version: number;
  durationMs: number;
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
