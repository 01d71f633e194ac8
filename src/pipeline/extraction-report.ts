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
