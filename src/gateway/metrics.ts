import type { BacklogView } from '../service/extraction-backlog.ts';

/**
 * Prometheus metrics, hand-rolled (text exposition format 0.0.4): a handful of
 * histograms and counters do not justify a dependency, and `observe` must stay
 * allocation-free because it runs once per acked turn.
 */

/** Content-Type of the `/metrics` reply. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** A cumulative histogram observed in milliseconds and exposed in seconds (Prometheus base unit). */
export class Histogram {
  private readonly counts: Float64Array;
  private sum = 0;
  private count = 0;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly boundsMs: readonly number[],
  ) {
    this.counts = new Float64Array(boundsMs.length);
  }

  /** Record one duration in milliseconds. */
  observe(ms: number): void {
    this.sum += ms;
    this.count++;
    const b = this.boundsMs;
    for (let i = 0; i < b.length; i++) {
      if (ms <= b[i]!) {
        this.counts[i]!++;
        return;
      }
    }
  }

  /** Number of observations so far. */
  get total(): number {
    return this.count;
  }

  render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} histogram\n`;
    let cumulative = 0;
    for (let i = 0; i < this.boundsMs.length; i++) {
      cumulative += this.counts[i]!;
      out += `${this.name}_bucket{le="${this.boundsMs[i]! / 1000}"} ${cumulative}\n`;
    }
    out += `${this.name}_bucket{le="+Inf"} ${this.count}\n${this.name}_sum ${this.sum / 1000}\n${this.name}_count ${this.count}\n`;
    return out;
  }
}

/** A monotonically increasing counter, optionally split by one label. */
export class Counter {
  private readonly values = new Map<string, number>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly label?: string,
  ) {}

  inc(labelValue = '', by = 1): void {
    this.values.set(labelValue, (this.values.get(labelValue) ?? 0) + by);
  }

  /** Current value for a label value (tests, logs). */
  get(labelValue = ''): number {
    return this.values.get(labelValue) ?? 0;
  }

  render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} counter\n`;
    if (this.values.size === 0 && !this.label) out += `${this.name} 0\n`;
    for (const [v, n] of this.values) out += this.label ? `${this.name}{${this.label}="${escapeLabel(v)}"} ${n}\n` : `${this.name} ${n}\n`;
    return out;
  }
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function gauge(name: string, help: string, value: number): string {
  return `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name} ${value}\n`;
}

const CALL_PATH_MS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 1000];
const EXTRACTION_MS = [100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, 120_000];
const STAGE_MS = [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000];

/** Everything the gateway measures; gauges are sampled at scrape time. */
export class GatewayMetrics {
  readonly append = new Histogram('memgate_append_duration_seconds', 'Turn append: from the gateway handing it to the service to its durable ack (every edge).', CALL_PATH_MS);
  readonly start = new Histogram('memgate_start_duration_seconds', 'Session start: request received to context sent.', CALL_PATH_MS);
  readonly search = new Histogram('memgate_search_duration_seconds', 'Memory search: request received to results sent.', CALL_PATH_MS);
  readonly extraction = new Histogram('memgate_extraction_duration_seconds', 'Extraction runs (from extraction.finished events).', EXTRACTION_MS);
  /** The three stages of a run (extraction.finished `stageMs`): where a slow lane spends its time. */
  readonly extractionStages = {
    read: new Histogram('memgate_extraction_read_duration_seconds', 'Extraction read stage: buffer and hot document read, turns chosen.', STAGE_MS),
    plan: new Histogram('memgate_extraction_plan_duration_seconds', 'Extraction plan stage: facts extracted, window compressed, next document built (no write).', STAGE_MS),
    commit: new Histogram('memgate_extraction_commit_duration_seconds', 'Extraction commit stage: ACUs, cold turns, hot document, buffer removal, context cache.', STAGE_MS),
  };
  readonly errors = new Counter('memgate_errors_total', 'Error replies by code.', 'code');
  readonly events = new Counter('memgate_events_total', 'Live events relayed to subscribers, by type.', 'type');
  readonly eventsDropped = new Counter('memgate_events_dropped_total', 'Live events skipped for subscribers over their send budget (each gap is announced to the subscriber).');
  readonly extractionFailures = new Counter('memgate_extraction_failures_total', 'extraction.failed events.');
  /** What committed runs did (extraction.finished): whether the lane keeps up, and how much of it waits for the encoder. */
  readonly archived = new Counter('memgate_turns_archived_total', 'Turns committed extraction runs compressed and archived.');
  readonly acus = new Counter('memgate_acus_indexed_total', 'ACUs indexed by committed runs, by vector: full, or lexical (the lane was behind; re-embedded later).', 'vector');
  readonly acusUpgraded = new Counter('memgate_acus_upgraded_total', 'ACUs indexed while the lane was behind, re-embedded with the full embedder.');
  readonly quarantined = new Counter('memgate_turns_quarantined_total', 'Stored turns extraction set aside as unprocessable (turn.quarantined events).');
  readonly backpressure = new Counter('memgate_ws_backpressure_total', 'Sends that found a connection over its backpressure limit.');
  readonly http = new Counter('memgate_http_requests_total', 'HTTP requests by status.', 'status');
  /** Open WebSocket connections. */
  connections = 0;
  /** Connections with a started call. */
  activeCalls = 0;

  /** Render the exposition text; `queueDepth` and `backlog` are sampled by the caller. */
  render(queueDepth: number | null, backlog: BacklogView | null = null): string {
    return [
      this.append.render(),
      this.start.render(),
      this.search.render(),
      this.extraction.render(),
      this.extractionStages.read.render(),
      this.extractionStages.plan.render(),
      this.extractionStages.commit.render(),
      this.errors.render(),
      this.events.render(),
      this.eventsDropped.render(),
      this.extractionFailures.render(),
      this.archived.render(),
      this.acus.render(),
      this.acusUpgraded.render(),
      this.quarantined.render(),
      this.backpressure.render(),
      this.http.render(),
      gauge('memgate_ws_connections', 'Open WebSocket connections.', this.connections),
      gauge('memgate_active_calls', 'WebSocket connections with a started call.', this.activeCalls),
      queueDepth === null ? '' : gauge('memgate_extraction_queue_depth', 'Extraction jobs waiting or in flight.', queueDepth),
      backlog === null ? '' : renderBacklog(backlog),
    ].join('');
  }
}

/** The extraction backlog gauges: turns this gateway acked that no committed run has read yet. */
function renderBacklog(b: BacklogView): string {
  return [
    gauge('memgate_extraction_backlog_turns', 'Acked turns no committed extraction has read yet.', b.turns),
    gauge('memgate_extraction_backlog_tokens', 'Tokens of those turns.', b.tokens),
    gauge('memgate_extraction_backlog_users', 'Users with unextracted turns.', b.users),
    gauge('memgate_extraction_backlog_users_behind', 'Users with more than one token-threshold window unextracted.', b.usersBehind),
    gauge('memgate_extraction_backlog_max_windows', "The largest user's unextracted tokens, in token-threshold windows.", b.maxWindows),
    gauge('memgate_extraction_backlog_oldest_age_seconds', 'Age of the oldest unextracted turn.', b.oldestAgeMs / 1000),
  ].join('');
}
