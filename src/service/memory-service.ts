import { Buffer } from 'node:buffer';
import type { Clock } from '../core/clock.ts';
import { MemgateError, badRequest, sessionConflict, toMemgateError } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import { estimateTokens } from '../core/tokens.ts';
import { turnDefect } from '../core/turn-check.ts';
import type { EncodedContext, QuarantinedTurn, Scope, Turn, TurnInput } from '../core/types.ts';
import type { Config } from '../config/config-schema.ts';
import type { ExtractionSchema } from '../core/extraction-schema.ts';
import type { Ports } from '../ports/index.ts';
import { jobKey } from '../ports/job-bus.ts';
import type { SessionRecord } from '../ports/turn-buffer.ts';
import type { AppendOutcome } from '../ports/turn-buffer.ts';
import { activeEntities, isExpired } from '../memory/supersession.ts';
import { buildSessionContext } from '../memory/context-block.ts';
import { contextFields, encodeContext, packEncoded, unpackContext, type ContextFields } from '../memory/encoded-context.ts';
import { searchCascade } from '../memory/search-cascade.ts';
import { SemanticTiers } from '../memory/semantic-tiers.ts';
import { MeaningWarmer } from '../memory/meaning-warmer.ts';
import { LruMap } from '../memory/lru-map.ts';
import { extractionDeps, runExtractionWhenFree, type ExtractionDeps } from '../pipeline/extraction-job.ts';
import { extractionFailedEvent } from '../pipeline/extraction-report.ts';
import type { AckReply, ContextReply, EncodedStart, ExtractionReport, MemoryApi, SearchOptions, SearchReply, StartOptions, TimelineEntity } from './api.ts';
import { SchemaRegistry } from './schema-registry.ts';
import { ExtractionBacklog, type BacklogCrossing, type BacklogView } from './extraction-backlog.ts';
import { FlushFlights } from './flush-flights.ts';

/** The memory engine behind the gateway: call-path operations stay thin; intelligence runs in the pipeline. */
export class MemoryService implements MemoryApi {
  readonly schemas: SchemaRegistry;
  readonly extraction: ExtractionDeps;
  private readonly threshold: number;
  /** Per user: the timer of a scheduled publish retry. */
  private readonly publishRetries = new Map<string, NodeJS.Timeout>();
  private readonly maxTurnBytes: number;
  /** Turns acked here that no committed run has read yet (/metrics, /v1/extraction, `extraction.backlog`). */
  private readonly backlog: ExtractionBacklog;
  private readonly flushes: FlushFlights;
  private readonly unsubscribe: () => void;
  /** Field and turn vectors for search by meaning, cached across searches; null when the embedder's cosine is word overlap. */
  private readonly semantic: SemanticTiers | null;
  /** Embeds appended turns and read schemas' fields into `semantic`'s caches off the call path; null without meaning or with `meaningWarmShare` 0. */
  private readonly warmer: MeaningWarmer | null;
  /** Agents whose schema a session start already had read for the warm queue (bounded: one read per agent per process, not per call). */
  private readonly warmedAgents = new LruMap<string, true>(4096);

  /**
   * `flushLane`: where `flush` runs instead of here, or null to run it here. The wiring
   * passes the extraction thread's lane: that thread's user lock is not this process's,
   * so a flush must go through it and never race its extraction of the same user.
   */
  constructor(
    private readonly ports: Ports,
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly flushLane: (scope: Scope, maxWaitMs: number) => Promise<ExtractionReport> | null = () => null,
  ) {
    this.schemas = new SchemaRegistry(ports.documents, config.schemasDir, logger);
    this.threshold = config.memory.tokenThreshold;
    this.maxTurnBytes = config.server.maxTurnBytes;
    this.semantic = SemanticTiers.for(ports.embedder);
    this.warmer = this.semantic && config.memory.meaningWarmShare > 0 ? new MeaningWarmer(this.semantic, { share: config.memory.meaningWarmShare }) : null;
    this.extraction = extractionDeps(config, ports, (t, a) => this.schemaOf(t, a), clock, logger.child({ component: 'pipeline' }));
    this.backlog = new ExtractionBacklog(this.threshold, config.worker.backlogAlertWindows, (c) => this.announce(c));
    // Whichever process committed the run (the extraction thread, a worker of the cluster), its event says what it read.
    this.unsubscribe = ports.events.subscribe((e) => {
      if (e.type !== 'extraction.finished' || typeof e.data['readThroughSeq'] !== 'number') return;
      this.backlog.readThrough({ tenantId: e.tenantId, agentId: e.agentId, userId: e.userId }, e.data['readThroughSeq'], this.clock.now());
    });
    this.flushes = new FlushFlights({
      buffer: ports.buffer,
      documents: ports.documents,
      events: ports.events,
      deadlineMs: config.worker.flushDeadlineMs,
      run: async (scope, maxWaitMs) => {
        const report = await (this.flushLane(scope, maxWaitMs) ?? runExtractionWhenFree(this.extraction, scope, maxWaitMs, 'all'));
        // A skipped run publishes nothing; what it found already read still leaves the backlog.
        if (!report.ran && report.readThroughSeq > 0) this.backlog.readThrough(scope, report.readThroughSeq, this.clock.now());
        return report;
      },
    });
  }

  /** The extraction backlog of a tenant (or of every tenant): what the lane has not read yet. */
  extractionBacklog(tenantId?: string): BacklogView {
    return this.backlog.snapshot(this.clock.now(), tenantId);
  }

  /** A user's backlog crossed a level: published off the ack path. */
  private announce(c: BacklogCrossing): void {
    const { scope, state, view } = c;
    setImmediate(() => {
      this.ports.events.publish({
        type: 'extraction.backlog',
        tenantId: scope.tenantId,
        agentId: scope.agentId,
        userId: scope.userId,
        at: this.clock.now(),
        data: { state, turns: view.turns, tokens: view.tokens, windows: view.windows, oldestAgeMs: view.oldestAgeMs },
      });
      if (state === 'behind') this.logger.warn('extraction backlog: user behind', { ...view, tenantId: scope.tenantId });
    });
  }

  async startSession(scope: Scope, sessionId?: string): Promise<ContextReply> {
    const started = await this.startSessionEncoded(scope, sessionId);
    return { sessionId: started.sessionId, ...contextFields(started.context), tookMs: started.tookMs, ...(started.reopened ? { reopened: true as const } : {}) };
  }

  async startSessionEncoded(scope: Scope, sessionId?: string, options: StartOptions = {}): Promise<EncodedStart> {
    const t0 = performance.now();
    const id = sessionId ?? newId('s_');
    const now = this.clock.now();
    // The context read runs beside the open: a conflict wastes one cache read, every other start saves a round trip.
    const [opened, context] = await Promise.all([
      this.ports.buffer.openSession({ sessionId: id, scope, startedAt: now, endedAt: null, ...(options.holder === undefined ? {} : { holder: options.holder }) }),
      this.contextOf(scope, now),
    ]);
    if (opened.status === 'conflict') throw sessionConflict(id);
    this.warmFieldsOf(scope);
    return { sessionId: id, context, tookMs: round(performance.now() - t0), reopened: opened.status === 'reopened', generation: opened.session.generation };
  }

  /** The context a session start would hand the agent now, without starting one (dashboards). */
  async readContext(scope: Scope): Promise<ContextFields> {
    return contextFields(await this.contextOf(scope, this.clock.now()));
  }

  /** The agent's schema; its fields go to the warm queue (cached ones are skipped there), so a changed schema is warmed on its first read. */
  private async schemaOf(tenantId: string, agentId: string): Promise<ExtractionSchema> {
    const schema = await this.schemas.get(tenantId, agentId);
    this.warmer?.addFields(schema);
    return schema;
  }

  /** Once per agent (per process): read its schema after the start's reply, so its field vectors are cached before the call's first search. */
  private warmFieldsOf(scope: Scope): void {
    if (!this.warmer) return;
    const key = `${scope.tenantId}\n${scope.agentId}`;
    if (this.warmedAgents.has(key)) return;
    this.warmedAgents.set(key, true);
    setImmediate(() => void this.schemaOf(scope.tenantId, scope.agentId).catch(() => this.warmedAgents.delete(key)));
  }

  /**
   * Resolves when the warm queue has nothing left to embed (at once without one). Tests and
   * diagnostics only: a search made after it finds every appended turn's vector cached, so its
   * results do not depend on how fast the encoder was.
   */
  meaningIdle(): Promise<void> {
    return this.warmer?.idle() ?? Promise.resolve();
  }

  private async contextOf(scope: Scope, now: number): Promise<EncodedContext> {
    const window = this.config.memory.contextWindowTurns;
    // The cache holds what was buffered when it was built; the buffer's tail (one bounded read,
    // beside the cache read) tells whether turns came since: a dropped call's, or a call's tail
    // not yet extracted. Nothing said may be missing from the next block.
    const [bytes, buffered] = await Promise.all([this.ports.cache.get(scope), this.ports.buffer.latest(scope, window)]);
    const cached = bytes === null ? null : unpackContext(bytes);
    const fresh = (c: EncodedContext) => (c.expiresAt === null || c.expiresAt > now) && buffered.every((t) => t.receivedAt < c.builtAt);
    if (cached && fresh(cached)) return cached;
    // Miss, an ephemeral fact expired, or newer turns: one document read refills the cache.
    const doc = await this.ports.documents.getHot(scope);
    const built = buildSessionContext(doc, { now, contextWindowTurns: window, bufferedTurns: buffered });
    const context = encodeContext(built);
    await this.ports.cache.set(scope, packEncoded(context));
    return context;
  }

  appendTurn(scope: Scope, sessionId: string, input: TurnInput): AckReply | Promise<AckReply> {
    // A UTF-16 code unit is at most 3 UTF-8 bytes, so most turns skip the count; byteLength counts without encoding.
    if (input.text.length * 3 > this.maxTurnBytes && Buffer.byteLength(input.text, 'utf8') > this.maxTurnBytes) {
      throw new MemgateError('too_large', `turn text exceeds ${this.maxTurnBytes} bytes`);
    }
    const now = this.clock.now();
    const turn: Omit<Turn, 'seq'> = {
      turnId: input.turnId ?? newId('t_'),
      sessionId,
      role: input.role,
      text: input.text,
      ts: input.ts ?? now,
      receivedAt: now,
      tokens: estimateTokens(input.text),
    };
    if (input.speaker !== undefined) turn.speaker = input.speaker;
    if (input.asrConfidence !== undefined) turn.asrConfidence = input.asrConfidence;
    if (input.interrupted !== undefined) turn.interrupted = input.interrupted;
    const outcome = this.ports.buffer.append(scope, sessionId, turn);
    return outcome instanceof Promise ? outcome.then((o) => this.acked(scope, o)) : this.acked(scope, outcome);
  }

  /** Ack, and publish an extraction job each time pending tokens cross a multiple of the threshold. */
  private acked(scope: Scope, o: AppendOutcome): AckReply {
    if (!o.duplicate) {
      this.backlog.add(scope, o.turn.seq, o.turn.tokens, o.turn.receivedAt);
      // Only queued: the batch runs on a later tick, under the warm share's budget.
      this.warmer?.addTurn(o.turn.text);
      const before = o.pendingTokens - o.turn.tokens;
      if (Math.floor(o.pendingTokens / this.threshold) > Math.floor(before / this.threshold)) this.publishJob(scope, 'threshold');
    }
    return { turnId: o.turn.turnId, seq: o.turn.seq, duplicate: o.duplicate };
  }

  /**
   * Publish the user's extraction job. The job is the only trigger for turns already
   * buffered, so a failed publish (the bus restarting) is retried with backoff (1 s
   * doubling to 30 s, for about five minutes), one retry chain per user.
   */
  private publishJob(scope: Scope, reason: 'threshold' | 'end', attempt = 0): void {
    const key = jobKey(scope);
    if (attempt === 0 && this.publishRetries.has(key)) return; // a retry for this user is already scheduled
    this.ports.bus.publish({ scope, reason, requestedAt: this.clock.now() }).then(
      () => {
        if (attempt > 0) this.logger.info('extraction job published after retrying', { attempts: attempt + 1, tenantId: scope.tenantId, agentId: scope.agentId, userId: scope.userId });
        this.publishRetries.delete(key);
      },
      (err: unknown) => {
        const fields = { err, attempt: attempt + 1, tenantId: scope.tenantId, agentId: scope.agentId, userId: scope.userId };
        if (attempt >= PUBLISH_RETRIES) {
          this.publishRetries.delete(key);
          // The turns stay buffered: the next crossing, the call's end or a flush extracts them.
          return this.logger.error('extraction job publish failed; giving up until the next trigger', fields);
        }
        if (attempt === 0) this.logger.warn('extraction job publish failed; retrying', fields);
        const timer = setTimeout(() => this.publishJob(scope, reason, attempt + 1), Math.min(30_000, 1_000 * 2 ** attempt));
        timer.unref();
        this.publishRetries.set(key, timer);
      },
    );
  }

  /** Stop pending publish retries, event listening and the warm queue (the runtime is closing). */
  stopRetries(): void {
    this.unsubscribe();
    this.warmer?.close();
    for (const t of this.publishRetries.values()) clearTimeout(t);
    this.publishRetries.clear();
  }

  session(tenantId: string, sessionId: string): Promise<SessionRecord | null> {
    return this.ports.buffer.getSession(tenantId, sessionId);
  }

  async search(scope: Scope, query: string, options: SearchOptions = {}): Promise<SearchReply> {
    const t0 = performance.now();
    if (query.trim().length === 0) throw badRequest('query must not be empty');
    const m = this.config.memory;
    const p = this.ports;
    const memory = {
      hot: (s: Scope) => p.documents.getHot(s),
      buffered: async (s: Scope) => (await p.buffer.list(s)).filter((t) => turnDefect(t) === null),
      schema: (s: Scope) => this.schemaOf(s.tenantId, s.agentId),
    };
    const deps = { acus: p.acus, cold: p.cold, embedder: p.embedder, now: () => performance.now(), memory, clock: () => this.clock.now(), semantic: this.semantic };
    const { results, partial } = await searchCascade(deps, scope, query, {
      k: options.k ?? m.searchK,
      ...(options.deadlineMs !== undefined ? { deadlineMs: options.deadlineMs } : {}),
      ...(options.asOf !== undefined ? { asOf: options.asOf } : {}),
      hybrid: m.hybrid,
      rrfK: m.rrfK,
      confidenceThreshold: m.confidenceThreshold,
      meaningWaitMs: m.meaningWaitMs,
      mmrLambda: m.mmrLambda,
    });
    // Scores are rankings, not measurements: 4 decimals, so a reply never reads 0.9500000000000001.
    return { results: results.map((r) => ({ ...r, score: roundScore(r.score) })), tookMs: round(performance.now() - t0), ...(partial ? { partial: true } : {}) };
  }

  async endSession(scope: Scope, sessionId: string, options: { ifGeneration?: number } = {}): Promise<boolean> {
    const ended = await this.ports.buffer.endSession(scope.tenantId, sessionId, this.clock.now(), options.ifGeneration);
    // An unconditional end publishes even for an unknown session: its turns may be buffered all the same.
    if ((ended || options.ifGeneration === undefined) && (await this.ports.buffer.pendingTokens(scope)) > 0) this.publishJob(scope, 'end');
    return ended;
  }

  async storedAck(scope: Scope, turnId: string): Promise<AckReply | null> {
    const seq = await this.ports.buffer.seqOf(scope, turnId);
    return seq === null ? null : { turnId, seq, duplicate: true };
  }

  /**
   * Extract the user now and wait for the commit: see FlushFlights (waits for a run in progress, shares
   * concurrent flushes). A failure reaches the caller and, like a background one, the log and the
   * `extraction.failed` event (so `/v1/extraction` counts it).
   */
  async flush(scope: Scope): Promise<ExtractionReport> {
    try {
      return await this.flushes.flush(scope);
    } catch (err) {
      const e = toMemgateError(err);
      this.logger.warn('flush failed', { err: e, retryable: e.retryable, tenantId: scope.tenantId, agentId: scope.agentId, userId: scope.userId });
      this.ports.events.publish(extractionFailedEvent(scope, e, this.clock.now(), { flush: true }));
      throw e;
    }
  }

  async timeline(scope: Scope, history: boolean): Promise<TimelineEntity[]> {
    const doc = await this.ports.documents.getHot(scope);
    if (!doc) return [];
    const now = this.clock.now();
    if (!history) return activeEntities(doc.entities, now);
    return doc.entities.map((e) => (e.status === 'active' && isExpired(e, now) ? { ...e, status: 'expired' as const } : e));
  }

  async putSchema(tenantId: string, agentId: string, schema: unknown): Promise<ExtractionSchema> {
    const stored = await this.schemas.put(tenantId, agentId, schema);
    this.warmer?.addFields(stored);
    return stored;
  }

  async forget(scope: Scope): Promise<void> {
    const p = this.ports;
    await Promise.all([p.buffer.forget(scope), p.documents.forget(scope), p.cold.forget(scope), p.acus.forget(scope), p.cache.delete(scope)]);
    this.backlog.drop(scope);
  }

  bufferedTurns(scope: Scope): Promise<Turn[]> {
    return this.ports.buffer.list(scope);
  }

  async quarantined(scope: Scope): Promise<QuarantinedTurn[]> {
    return (await this.ports.documents.getHot(scope))?.quarantined ?? [];
  }
}

/** Publish retries after a failure: 1, 2, 4, 8, 16, then every 30 s: about five minutes. */
const PUBLISH_RETRIES = 14;

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

const roundScore = (score: number): number => Math.round(score * 10_000) / 10_000;
