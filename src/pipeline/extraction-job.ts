import type { Clock } from '../core/clock.ts';
import { iso } from '../core/clock.ts';
import { MemgateError } from '../core/errors.ts';
import { stableHash } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import { inRootSpan, inSpan, scopeAttributes } from '../core/tracing.ts';
import type { ExtractionSchema } from '../core/extraction-schema.ts';
import type { Acu, FactValue, HotDocument, Scope, Turn } from '../core/types.ts';
import type { Config, MemoryConfig } from '../config/config-schema.ts';
import type { ExtractionPorts } from '../ports/index.ts';
import { applyFacts, type ResolvedFact } from '../memory/supersession.ts';
import { smartKeep } from '../memory/smart-keep.ts';
import { buildSessionContext } from '../memory/context-block.ts';
import { packContext } from '../memory/encoded-context.ts';
import { skippedReport, type ExtractionReport, type StageTimings } from './extraction-report.ts';
import { compressWindow } from './compress-stage.ts';
import { quarantineTurns, splitDefective } from './quarantine.ts';
import { resolveFacts } from './resolve-facts.ts';
import { mergeSummaries } from './summaries.ts';
import { indexesLexically, nextDeferred, upgradeCount, upgradeDeferred, type DeferralOptions, type SemanticMode } from './deferred-acus.ts';

/** What one extraction run needs. */
export interface ExtractionDeps {
  ports: ExtractionPorts;
  memory: MemoryConfig;
  clock: Clock;
  logger: Logger;
  lockTtlMs: number;
  /** Tokens one run takes at most (memory.tokenThreshold × worker.maxRunWindows); the rest waits for the next run. */
  maxRunTokens: number;
  /** When the lane is behind, ACUs get the embedder's cheap vector and are re-embedded later (deferred-acus.ts). */
  deferral: DeferralOptions;
  /** The agent's schema in force (stored PUT, else file, else default). */
  schemaFor(tenantId: string, agentId: string): Promise<ExtractionSchema>;
}

/**
 * The one place extraction dependencies are made from configuration: the gateway's service
 * (inline and NATS workers, flushes without a thread) and the extraction thread both call it.
 */
export function extractionDeps(config: Config, ports: ExtractionPorts, schemaFor: ExtractionDeps['schemaFor'], clock: Clock, logger: Logger): ExtractionDeps {
  return {
    ports,
    memory: config.memory,
    clock,
    logger,
    lockTtlMs: config.worker.lockTtlMs,
    maxRunTokens: config.memory.tokenThreshold * config.worker.maxRunWindows,
    deferral: { deferAfterMs: config.embeddings.deferAfterMs, upgradeBatch: config.embeddings.upgradeBatch, maxDeferred: config.embeddings.maxDeferred },
    schemaFor,
  };
}

/** Lock key of a user: one extraction at a time per agent+user. */
export function lockKeyOf(scope: Scope): string {
  return `extract:${scope.tenantId}:${scope.agentId}:${scope.userId}`;
}

/** An empty hot document (version 0 = never committed). */
export function emptyHotDocument(scope: Scope, now: number): HotDocument {
  return { scope, profile: {}, entities: [], recent: [], summaries: [], counters: { extractions: 0, turnsArchived: 0, acusIndexed: 0, acusSuppressed: 0 }, version: 0, updatedAt: iso(now) };
}

/**
 * One extraction job (docs/design.md §3) under the user's lock, in three timed stages.
 * Read: the buffer and hot document, leftovers of a crashed commit, defective turns set
 * aside, the run's turns chosen (oldest first, up to `maxRunTokens`; nothing when every
 * buffered turn was already extracted). Plan: stage 0 splits kept turns from the window;
 * stage 1 reads facts from every turn of the run (kept ones too, so a fact said in the
 * last turns is current at the next call) while stage 3 compresses the window only;
 * stage 2 merges; no write. Commit: writes ordered so a crash at any point loses nothing
 * and a retry changes nothing: ACUs (idempotent ids) and cold turns (upsert) first, then
 * the hot document by compare-and-set while the lease is still held, then the window
 * leaves the buffer by id, then the context cache is rebuilt.
 */
export async function runExtraction(deps: ExtractionDeps, scope: Scope, mode: SemanticMode = 'now'): Promise<ExtractionReport> {
  const lease = await deps.ports.lock.acquire(lockKeyOf(scope), deps.lockTtlMs);
  if (!lease) return skippedReport('locked');
  // A short lease kept alive while this run is: a worker that dies frees the user within one TTL.
  const heartbeat = setInterval(() => void lease.renew(deps.lockTtlMs).catch(() => undefined), Math.max(250, Math.floor(deps.lockTtlMs / 3)));
  heartbeat.unref();
  try {
    return await runLocked(deps, scope, () => lease.isHeld(), mode);
  } finally {
    clearInterval(heartbeat);
    await lease.release().catch(() => undefined);
  }
}

async function runLocked(deps: ExtractionDeps, scope: Scope, stillHeld: () => Promise<boolean>, mode: SemanticMode): Promise<ExtractionReport> {
  const started = deps.clock.now();
  const t0 = performance.now();
  // One span per stage (children of the run's `memgate.extraction`); no-ops without an SDK.
  const read = await inSpan('memgate.extraction.read', {}, async (span) => {
    const outcome = await readStage(deps, scope, stillHeld, started);
    if (span.isRecording())
      span.setAttributes(
        'report' in outcome ? { 'memgate.extraction.skipped': outcome.report.skipped ?? '' } : { 'memgate.extraction.turns': outcome.turns.length, 'memgate.extraction.turns_left': outcome.left },
      );
    return outcome;
  });
  const t1 = performance.now();
  if ('report' in read) {
    // No turns to read, but ACUs waiting for the full embedder: re-embed them now if the lane can.
    const waiting = read.doc?.deferredAcus?.length ?? 0;
    if (read.doc && upgradeCount(mode, waiting, deps.deferral) > 0) return upgradeOnly(deps, scope, read.doc, mode, stillHeld, started, ms(t1 - t0));
    return { ...read.report, acusAwaitingEncoder: waiting, stageMs: { read: ms(t1 - t0), plan: 0, commit: 0 } };
  }
  const plan = await inSpan('memgate.extraction.plan', {}, () => planStage(deps, scope, read, started, mode));
  const t2 = performance.now();
  return inSpan('memgate.extraction.commit', {}, () => commitStage(deps, scope, read, plan, stillHeld, started, { read: ms(t1 - t0), plan: ms(t2 - t1) }));
}

/** What the read stage chose: the run's turns, or a report of why there is nothing to run (with the hot document it read, if it got that far). */
type ReadOutcome = { report: ExtractionReport; doc?: HotDocument } | RunInput;

interface RunInput {
  doc: HotDocument;
  /** Version of the hot document as read, before any quarantine commit of this run. */
  baseVersion: number;
  /** The run's turns, in seq order. */
  turns: Turn[];
  defective: number;
  /** Buffered turns past the cap, left for the next run. */
  left: number;
}

async function readStage(deps: ExtractionDeps, scope: Scope, stillHeld: () => Promise<boolean>, now: number): Promise<ReadOutcome> {
  const { ports, memory, clock } = deps;
  const [listed, stored] = await Promise.all([ports.buffer.list(scope), ports.documents.getHot(scope)]);
  let doc = stored ?? emptyHotDocument(scope, now);
  const baseVersion = doc.version;
  const leftover = committedWindowLeftovers(listed, doc.recent);
  // The last committed run died before removing its window: finish that removal, never commit it twice.
  if (leftover.length > 0) await ports.buffer.remove(scope, leftover);
  const gone = new Set(leftover);
  const unread = gone.size > 0 ? listed.filter((t) => !gone.has(t.turnId)) : listed;
  // A stored turn extraction cannot process would fail this user's every run: set it aside, go on with the rest.
  const { good, defective } = splitDefective(unread);
  if (defective.length > 0) doc = await quarantineTurns(deps, scope, doc, defective, stillHeld);
  // Nothing new since the last commit (its kept turns are all that is buffered): re-reading them would only repeat that run.
  const reason = good.length === 0 ? 'empty' : alreadyExtracted(good, doc.recent) ? 'up-to-date' : null;
  if (reason !== null) {
    if (defective.length > 0) {
      await ports.cache.set(scope, packContext(buildSessionContext(doc, { now: clock.now(), contextWindowTurns: memory.contextWindowTurns, bufferedTurns: await ports.buffer.list(scope) })));
    }
    const readThroughSeq = good.length > 0 ? good[good.length - 1]!.seq : 0;
    return { report: skippedReport(reason, { turnsQuarantined: defective.length, readThroughSeq, baseVersion, version: doc.version }), doc };
  }
  const turns = oldestWithin(good, doc.recent, deps.maxRunTokens);
  return { doc, baseVersion, turns, defective: defective.length, left: good.length - turns.length };
}

interface Plan {
  kept: Turn[];
  window: Turn[];
  facts: ResolvedFact[];
  merged: ReturnType<typeof applyFacts>;
  compressed: Awaited<ReturnType<typeof compressWindow>>;
  /** Deferred ACUs of earlier runs, re-embedded: upserted with this run's. */
  upgraded: Acu[];
  next: HotDocument;
}

async function planStage(deps: ExtractionDeps, scope: Scope, input: RunInput, started: number, mode: SemanticMode): Promise<Plan> {
  const { ports, memory, clock } = deps;
  const { doc, turns } = input;
  const schema = await deps.schemaFor(scope.tenantId, scope.agentId);
  const { kept, window } = smartKeep(turns, { minKeptTurns: memory.minKeptTurns, maxKeptTurns: memory.maxKeptTurns, weights: memory.smartKeep });
  ports.events.publish({ type: 'extraction.started', ...scopeFields(scope), at: started, data: { turns: turns.length, window: window.length, kept: kept.length, left: input.left } });

  const knownProfile: Record<string, FactValue> = Object.fromEntries(Object.entries(doc.profile).map(([k, v]) => [k, v.value]));
  // Facts (the extractor, an LLM call when one is configured) and compression run side by side: a span each.
  const stage1 = inSpan('memgate.extraction.facts', { 'memgate.extraction.turns': turns.length }, async (span): Promise<ResolvedFact[]> => {
    const extracted = await ports.extractor.extract({ schema, turns, knownProfile, now: started });
    const resolved = resolveFacts(extracted, schema, turns, { lowAsrConfidence: memory.lowAsrConfidence });
    if (span.isRecording()) span.setAttribute('memgate.extraction.facts', resolved.length);
    return resolved;
  });
  const stage3 = inSpan('memgate.extraction.compress', { 'memgate.extraction.window': window.length }, async (span) => {
    const out = await compressWindow(ports, scope, window, {
      segmentTurns: memory.segmentTurns,
      dedupThreshold: memory.dedupThreshold,
      now: started,
      knownProfile,
      lexical: indexesLexically(mode, ports.embedder),
    });
    if (span.isRecording()) span.setAttribute('memgate.extraction.acus', out.acus.length);
    return out;
  });
  const deferred = doc.deferredAcus ?? [];
  const upgrade = upgradeDeferred(ports.embedder, deferred, upgradeCount(mode, deferred.length, deps.deferral));
  const [facts, compressed, { upgraded, rest }] = await Promise.all([stage1, stage3, upgrade]);
  const stillDeferred = nextDeferred(rest, compressed.lexical ? compressed.acus : [], deps.deferral.maxDeferred);

  const merged = applyFacts({ entities: doc.entities, profile: doc.profile }, facts, {
    now: started,
    defaultTtlHours: memory.ephemeralTtlHours,
    idFor: (f) => 'ent_' + stableHash(scope.tenantId, scope.agentId, scope.userId, f.key, JSON.stringify(f.value), f.validFrom),
  });
  const next: HotDocument = {
    scope,
    profile: merged.profile,
    entities: merged.entities,
    recent: kept,
    summaries: mergeSummaries(doc.summaries, window, compressed.acus, memory.maxSummaries),
    counters: {
      extractions: doc.counters.extractions + 1,
      turnsArchived: doc.counters.turnsArchived + window.length,
      acusIndexed: doc.counters.acusIndexed + compressed.acus.length,
      acusSuppressed: doc.counters.acusSuppressed + compressed.suppressed,
    },
    ...(doc.quarantined ? { quarantined: doc.quarantined } : {}),
    ...(stillDeferred.length > 0 ? { deferredAcus: stillDeferred } : {}),
    version: doc.version + 1,
    updatedAt: iso(clock.now()),
  };
  return { kept, window, facts, merged, compressed, upgraded, next };
}

async function commitStage(
  deps: ExtractionDeps,
  scope: Scope,
  input: RunInput,
  plan: Plan,
  stillHeld: () => Promise<boolean>,
  started: number,
  timed: Omit<StageTimings, 'commit'>,
): Promise<ExtractionReport> {
  const { ports, memory, clock } = deps;
  const { kept, window, facts, merged, compressed, upgraded, next } = plan;
  const t0 = performance.now();
  const indexed = [...compressed.acus, ...upgraded];
  if (indexed.length > 0) await ports.acus.upsert(scope, indexed);
  if (window.length > 0) await ports.cold.archive(scope, window);
  // Fencing: a worker whose lease expired (or was taken over) must not commit,
  // and the version check refuses a commit based on a stale read either way.
  if (!(await stillHeld())) throw new MemgateError('conflict', 'extraction lease expired before commit');
  if (!(await ports.documents.commitHot(next, input.doc.version))) throw new MemgateError('conflict', 'hot document changed during extraction');

  if (window.length > 0)
    await ports.buffer.remove(
      scope,
      window.map((t) => t.turnId),
    );
  const remaining = await ports.buffer.list(scope);
  await ports.cache.set(scope, packContext(buildSessionContext(next, { now: clock.now(), contextWindowTurns: memory.contextWindowTurns, bufferedTurns: remaining })));

  const finished = clock.now();
  for (const [type, list] of [
    ['fact.superseded', merged.superseded],
    ['fact.retracted', merged.retracted],
  ] as const) {
    for (const old of list) ports.events.publish({ type, ...scopeFields(scope), at: finished, data: { key: old.key, field: old.field, oldId: old.id, newId: old.supersededBy } });
  }
  if (compressed.acus.length > 0) ports.events.publish({ type: 'acus.indexed', ...scopeFields(scope), at: finished, data: { count: compressed.acus.length, suppressed: compressed.suppressed } });
  const report: ExtractionReport = {
    ran: true,
    turnsRead: input.turns.length,
    turnsKept: kept.length,
    turnsArchived: window.length,
    turnsQuarantined: input.defective,
    turnsLeft: input.left,
    readThroughSeq: input.turns[input.turns.length - 1]!.seq,
    factsExtracted: facts.length,
    entitiesInserted: merged.inserted.length,
    entitiesSuperseded: merged.superseded.length,
    entitiesRetracted: merged.retracted.length,
    profileUpdated: merged.profileUpdated.length,
    acusIndexed: compressed.acus.length,
    acusSuppressed: compressed.suppressed,
    acusDeferred: compressed.lexical ? compressed.acus.length : 0,
    acusUpgraded: upgraded.length,
    acusAwaitingEncoder: next.deferredAcus?.length ?? 0,
    baseVersion: input.baseVersion,
    version: next.version,
    durationMs: finished - started,
    stageMs: { ...timed, commit: ms(performance.now() - t0) },
  };
  ports.events.publish({ type: 'extraction.finished', ...scopeFields(scope), at: finished, data: { ...report } });
  deps.logger.info('extraction committed', { ...scopeFields(scope), ...report });
  return report;
}

/**
 * A run with no turns to read that re-embeds deferred ACUs: upsert the full vectors (same ids),
 * then the hot document without them (compare-and-set, so a concurrent commit wins and the
 * next run re-embeds again: idempotent). Nothing else changes, so the context cache stays.
 */
async function upgradeOnly(deps: ExtractionDeps, scope: Scope, doc: HotDocument, mode: SemanticMode, stillHeld: () => Promise<boolean>, started: number, readMs: number): Promise<ExtractionReport> {
  const { ports, clock } = deps;
  const t0 = performance.now();
  const deferred = doc.deferredAcus ?? [];
  const { upgraded, rest } = await upgradeDeferred(ports.embedder, deferred, upgradeCount(mode, deferred.length, deps.deferral));
  const t1 = performance.now();
  await ports.acus.upsert(scope, upgraded);
  if (!(await stillHeld())) throw new MemgateError('conflict', 'extraction lease expired before commit');
  const { deferredAcus: _old, ...base } = doc;
  const next: HotDocument = { ...base, ...(rest.length > 0 ? { deferredAcus: rest } : {}), version: doc.version + 1, updatedAt: iso(clock.now()) };
  if (!(await ports.documents.commitHot(next, doc.version))) throw new MemgateError('conflict', 'hot document changed during extraction');
  const finished = clock.now();
  const report: ExtractionReport = {
    ...skippedReport(''),
    ran: true,
    acusUpgraded: upgraded.length,
    acusAwaitingEncoder: rest.length,
    baseVersion: doc.version,
    version: next.version,
    durationMs: finished - started,
    stageMs: { read: readMs, plan: ms(t1 - t0), commit: ms(performance.now() - t1) },
  };
  delete report.skipped;
  ports.events.publish({ type: 'extraction.finished', ...scopeFields(scope), at: finished, data: { ...report } });
  deps.logger.info('deferred ACUs re-embedded', { ...scopeFields(scope), upgraded: upgraded.length, left: rest.length });
  return report;
}

/** Every buffered turn is one the last commit kept (same id and seq): that run already read them all. */
function alreadyExtracted(buffered: readonly Turn[], recent: readonly Turn[]): boolean {
  if (recent.length === 0) return false;
  const seqOf = new Map(recent.map((t) => [t.turnId, t.seq]));
  return buffered.every((t) => seqOf.get(t.turnId) === t.seq);
}

/**
 * The oldest turns whose new tokens fit `maxTokens` (at least one new turn): a user far behind is
 * caught up in bounded runs. Turns the last run kept are re-read for context but not counted:
 * they are the oldest buffered, so the cap never shrinks to them alone.
 */
function oldestWithin(turns: readonly Turn[], recent: readonly Turn[], maxTokens: number): Turn[] {
  const kept = new Set(recent.map((t) => t.turnId));
  let tokens = 0;
  let fresh = 0;
  let n = 0;
  for (; n < turns.length; n++) {
    const t = turns[n]!;
    if (kept.has(t.turnId)) continue;
    if (fresh > 0 && tokens + t.tokens > maxTokens) break;
    tokens += t.tokens;
    fresh++;
  }
  return n === turns.length ? [...turns] : turns.slice(0, n);
}

function ms(v: number): number {
  return Math.round(v * 1000) / 1000;
}

/**
 * Turn ids the last committed run archived and counted but that are still buffered (it crashed, or
 * the buffer failed, between the hot-document commit and the removal). That run kept exactly
 * `recent` and read every turn up to its newest kept one (seqs only grow; a turn is visible once its
 * seq exists), so a buffered turn at or below that seq and not in `recent` was in its window. Only
 * while every kept turn is still buffered under its seq: a buffer that lost its data and restarted
 * its seqs must never have new turns mistaken for archived ones.
 */
export function committedWindowLeftovers(buffered: readonly Turn[], recent: readonly Turn[]): string[] {
  if (recent.length === 0) return [];
  const seqOf = new Map(buffered.map((t) => [t.turnId, t.seq]));
  if (!recent.every((t) => seqOf.get(t.turnId) === t.seq)) return [];
  const keptIds = new Set(recent.map((t) => t.turnId));
  const lastReadSeq = Math.max(...recent.map((t) => t.seq));
  return buffered.filter((t) => t.seq <= lastReadSeq && !keptIds.has(t.turnId)).map((t) => t.turnId);
}

/**
 * Run extraction, waiting (bounded) while another run holds the user's lock.
 * The holder may have read the buffer before the turns that asked for this run,
 * so skipping would strand them until the next trigger; waiting is cheap.
 */
export async function runExtractionWhenFree(deps: ExtractionDeps, scope: Scope, maxWaitMs: number, mode: SemanticMode = 'now'): Promise<ExtractionReport> {
  // Its own trace (a run outlives the append or flush that asked for it), linked to that span when there is one.
  return inRootSpan('memgate.extraction', { ...scopeAttributes(scope), 'gen_ai.operation.name': 'update_memory' }, async (span) => {
    const deadline = Date.now() + maxWaitMs;
    for (let waits = 0; ; waits++) {
      const report = await runExtraction(deps, scope, mode);
      if (report.skipped !== 'locked') {
        if (span.isRecording()) span.setAttributes({ ...reportAttributes(report), 'memgate.extraction.lock_waits': waits });
        return report;
      }
      if (Date.now() > deadline) throw new MemgateError('unavailable', `another extraction of this user still held its lock after ${maxWaitMs} ms; try again`);
      await new Promise((r) => setTimeout(r, 25));
    }
  });
}

/** What a run did, as span attributes (counts and versions; never user content). */
function reportAttributes(report: ExtractionReport): Record<string, string | number | boolean> {
  return {
    'memgate.extraction.ran': report.ran,
    ...(report.skipped === undefined ? {} : { 'memgate.extraction.skipped': report.skipped }),
    'memgate.extraction.turns': report.turnsRead,
    'memgate.extraction.facts': report.factsExtracted,
    'memgate.extraction.acus': report.acusIndexed,
    'memgate.extraction.acus_deferred': report.acusDeferred,
    'memgate.extraction.acus_upgraded': report.acusUpgraded,
    'memgate.extraction.entities_superseded': report.entitiesSuperseded,
    'memgate.extraction.turns_left': report.turnsLeft,
    'memgate.memory.version': report.version,
  };
}

function scopeFields(scope: Scope): { tenantId: string; agentId: string; userId: string } {
  return { tenantId: scope.tenantId, agentId: scope.agentId, userId: scope.userId };
}
