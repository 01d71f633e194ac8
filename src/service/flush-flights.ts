import type { Scope } from '../core/types.ts';
import type { EventBus } from '../ports/event-bus.ts';
import { jobKey } from '../ports/job-bus.ts';
import type { DocumentStore } from '../ports/document-store.ts';
import type { TurnBuffer } from '../ports/turn-buffer.ts';
import { mergeReports, skippedReport, type ExtractionReport } from '../pipeline/extraction-report.ts';

/** What the flushes of one process need. */
export interface FlushDeps {
  buffer: TurnBuffer;
  documents: DocumentStore;
  /** Where `extraction.finished` of every run of the user is heard (this process's and, on a shared bus, the workers'). */
  events: EventBus;
  /** How long a flush waits for a run of the same user in progress (config.worker.flushDeadlineMs). */
  deadlineMs: number;
  /** One run for the user that waits for the user's lock up to `maxWaitMs`, then throws `unavailable`. */
  run(scope: Scope, maxWaitMs: number): Promise<ExtractionReport>;
}

/** One flush run in the air for a user, shared by every flush it covers. */
interface Flight {
  /** Flights are numbered in creation order: one created after a flush was asked for reads every turn that flush is about. */
  id: number;
  promise: Promise<ExtractionReport>;
}

/**
 * `flush` = extract that user now and wait for the commit. A run of the user already in
 * progress (a bus job, another flush) is waited for, not bounced; the flush then extracts
 * what is left, and answers with one report over both: the work done for the turns it was
 * asked about. Concurrent flushes of a user share one flight: a flush joins the flight in
 * the air and returns its report when that flight read through the newest turn buffered
 * when the flush was asked; otherwise it takes the next flight (which reads after it).
 */
export class FlushFlights {
  private readonly flights = new Map<string, Flight>();
  private created = 0;

  constructor(private readonly deps: FlushDeps) {}

  async flush(scope: Scope): Promise<ExtractionReport> {
    const ticket = this.created;
    const buffered = await this.deps.buffer.list(scope);
    const target = buffered.length > 0 ? buffered[buffered.length - 1]!.seq : 0;
    const key = jobKey(scope);
    for (;;) {
      const flight = this.flights.get(key) ?? this.launch(scope, key);
      const report = await flight.promise;
      if (flight.id > ticket || report.readThroughSeq >= target) return report;
    }
  }

  private launch(scope: Scope, key: string): Flight {
    const flight: Flight = { id: ++this.created, promise: Promise.resolve(skippedReport('empty')) };
    flight.promise = this.fly(scope).finally(() => {
      if (this.flights.get(key) === flight) this.flights.delete(key);
    });
    this.flights.set(key, flight);
    return flight;
  }

  /**
   * Runs until nothing is left (a backlog over the run cap takes several), each waiting for the
   * user's lock within what is left of the deadline. The runs of others that commit meanwhile
   * (the one in progress when the flush came) are heard as events and merged in.
   */
  private async fly(scope: Scope): Promise<ExtractionReport> {
    const deadline = Date.now() + this.deps.deadlineMs;
    const others: ExtractionReport[] = [];
    let heard = (): void => undefined;
    const off = this.deps.events.subscribe((e) => {
      if (e.type !== 'extraction.finished' || e.tenantId !== scope.tenantId || e.agentId !== scope.agentId || e.userId !== scope.userId) return;
      others.push(asReport(e.data));
      heard();
    });
    try {
      // Subscribed first: a run that commits after this read is one the flush waited for, and its event will come.
      const startVersion = (await this.deps.documents.getHot(scope))?.version ?? 0;
      const own: ExtractionReport[] = [];
      for (;;) {
        const report = await this.deps.run(scope, Math.max(0, deadline - Date.now()));
        own.push(report);
        // Past the deadline no further run starts: the report then says how many turns are left.
        if (!report.ran || report.turnsLeft === 0 || Date.now() >= deadline) break;
      }
      // On a shared bus (NATS) the event of the run waited for may land after this flush's own run: give it a moment.
      const endVersion = Math.max(...own.map((r) => r.version));
      const covered = () => uncovered(startVersion, endVersion, [...own, ...others]) === 0;
      if (!covered()) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, EVENT_GRACE_MS);
          heard = () => {
            if (!covered()) return;
            clearTimeout(timer);
            resolve();
          };
        });
      }
      const ownVersions = new Set(own.filter((r) => r.ran).map((r) => r.version));
      const ran = [...others.filter((r) => !ownVersions.has(r.version)), ...own.filter((r) => r.ran)].sort((a, b) => a.version - b.version);
      return mergeReports([...ran, ...own.filter((r) => !r.ran)]);
    } finally {
      off();
    }
  }
}

/** How long a flush waits for the event of a run it saw committed (a bus hop; only a failed run's never comes). */
const EVENT_GRACE_MS = 2_000;

/** Versions in (from, to] that no report's (baseVersion, version] accounts for. */
function uncovered(from: number, to: number, reports: readonly ExtractionReport[]): number {
  let missing = 0;
  for (let v = from + 1; v <= to; v++) if (!reports.some((r) => r.baseVersion < v && v <= r.version)) missing++;
  return missing;
}

/** An `extraction.finished` event's data as a report (fields an older worker did not send count as zero). */
function asReport(data: Record<string, unknown>): ExtractionReport {
  const base = skippedReport('');
  delete base.skipped;
  const report = { ...base, ...(data as Partial<ExtractionReport>), ran: true, stageMs: { ...base.stageMs, ...(data['stageMs'] as object | undefined) } };
  // An older worker's event says only what it committed.
  if (typeof data['baseVersion'] !== 'number') report.baseVersion = report.version - 1;
  return report;
}
