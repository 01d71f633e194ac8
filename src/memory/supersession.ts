import { iso } from '../core/clock.ts';
import { MemgateError } from '../core/errors.ts';
import type { FieldDef } from '../core/extraction-schema.ts';
import type { FactSource, FactValue, ProfileEntry, TemporalEntity } from '../core/types.ts';
import { valuesEqual } from '../text/values.ts';
import { CONFIDENCE_ORDER, REPLACE_RANK } from './confidence-order.ts';

/** A stage-1 fact validated against the schema: keyed, normalised, with its world time and evidence turn ids. */
export interface ResolvedFact {
  key: string;
  field: FieldDef;
  value: FactValue;
  source: FactSource;
  /** World time (ISO) the fact became true. */
  validFrom: string;
  evidence: string[];
  /** When it was said (ISO, the evidence turn's time): statement order decides current truth. Defaults to validFrom. */
  statedAt?: string;
  /** Marked as a correction by the speaker: it retracts the current value instead of superseding it. */
  correction?: boolean;
  /** The value no longer holds and nothing replaces it: the current record of this value ends (ExtractedFact.ended). */
  ended?: boolean;
}

/** The part of the hot document stage 2 rewrites. */
export interface MemoryState {
  entities: TemporalEntity[];
  profile: Record<string, ProfileEntry>;
}

/** Merge knobs; `idFor` must be deterministic so a re-delivered job produces the same ids. */
export interface MergeOptions {
  /** System time of the extraction (epoch ms): `recordedAt` (an ephemeral TTL runs in world time, see expiryOf). */
  now: number;
  defaultTtlHours: number;
  idFor: (f: ResolvedFact) => string;
}

/** New state plus what changed (final versions of the records), for reports and events. */
export interface MergeResult {
  entities: TemporalEntity[];
  profile: Record<string, ProfileEntry>;
  inserted: TemporalEntity[];
  /** Records that were active before this merge and are superseded after it. */
  superseded: TemporalEntity[];
  /** Records that were active before this merge and are retracted after it. */
  retracted: TemporalEntity[];
  /** Profile keys whose value or source changed (or that were created). */
  profileUpdated: string[];
}

const HOUR_MS = 3_600_000;

interface Work {
  entities: TemporalEntity[];
  ids: Set<string>;
  inserted: string[];
  superseded: string[];
  retracted: string[];
  opts: MergeOptions;
}

/**
 * Stages 2A/2B (docs/design.md §3, docs/protocol.md "Memory semantics"), pure. Facts apply in
 * the order they were said; per key there is one current record (the newest statement
 * of at least the current confidence) and possibly inferred candidates beside it.
 * - Same value again: confirms the record (evidence, stronger source, renewed TTL); a
 *   re-delivered job (evidence already present) changes nothing.
 * - A different value whose `validFrom` is after the current one's supersedes it
 *   (`validUntil` = the new `validFrom`); one at or before it, or one marked as a
 *   correction, retracts it. Either way the newest statement is current.
 * - An `inferred` value never displaces an `explicit`/`confirmed` one: it stays an
 *   active inferred candidate until a later statement settles it (a stronger statement
 *   of its value promotes it; any other stronger statement retracts it).
 * - A statement older than the current record's (a late turn) only adds history.
 * - Ephemeral TTL runs from the moment a date/time value is about, else from when it was said; profile entries are a projection of the key's current record.
 */
export function applyFacts(state: MemoryState, facts: readonly ResolvedFact[], opts: MergeOptions): MergeResult {
  const entities = state.entities.map(cloneEntity);
  const work: Work = { entities, ids: new Set(entities.map((e) => e.id)), inserted: [], superseded: [], retracted: [], opts };
  const profile: Record<string, ProfileEntry> = {};
  for (const [k, e] of Object.entries(state.profile)) profile[k] = { ...e, value: cloneValue(e.value), evidence: [...e.evidence] };

  const ordered = facts
    .map((f, i) => {
      worldMs(f.validFrom, `fact ${f.key}`, 'bad_request');
      return { f, said: worldMs(statedAt(f), `fact ${f.key}`, 'bad_request'), i };
    })
    .sort((a, b) => a.said - b.said || a.i - b.i);
  const profileKeys = new Set<string>();
  for (const { f } of ordered) {
    if (f.field.category === 'profile') {
      seedLegacyProfile(work, profile[f.key], f);
      profileKeys.add(f.key);
    }
    applyOne(work, f);
  }

  const profileUpdated: string[] = [];
  for (const key of profileKeys) {
    const current = currentRecord(entities, key);
    if (!current) {
      // Its value ended ("I no longer work at Infosys"): the profile no longer states one.
      if (profile[key] !== undefined && !entities.some((e) => e.key === key && e.status === 'active')) {
        delete profile[key];
        profileUpdated.push(key);
      }
      continue;
    }
    const prev = state.profile[key];
    if (!prev || !valuesEqual(prev.value, current.value) || prev.source !== current.source) profileUpdated.push(key);
    profile[key] = { value: cloneValue(current.value), updatedAt: current.validFrom, source: current.source, evidence: [...current.evidence] };
  }

  const byId = new Map(entities.map((e) => [e.id, e]));
  const pick = (ids: string[]): TemporalEntity[] => [...new Set(ids)].map((id) => byId.get(id)).filter((e): e is TemporalEntity => e !== undefined);
  return { entities, profile, inserted: pick(work.inserted), superseded: pick(work.superseded), retracted: pick(work.retracted), profileUpdated };
}

/** True once an ephemeral record's TTL has passed: hidden from context, never deleted. */
export function isExpired(e: TemporalEntity, now: number): boolean {
  return e.expiresAt !== null && Date.parse(e.expiresAt) <= now;
}

/** Records session start may show: active and not expired (current values and inferred candidates). */
export function activeEntities(entities: readonly TemporalEntity[], now: number): TemporalEntity[] {
  return entities.filter((e) => e.status === 'active' && !isExpired(e, now));
}

/**
 * The key's current record: among its active records, the strongest by confidence, then
 * the newest statement. Inferred candidates waiting beside a stronger value are not it.
 */
export function currentRecord(entities: readonly TemporalEntity[], key: string): TemporalEntity | undefined {
  let best: TemporalEntity | undefined;
  for (const e of entities) {
    if (e.key !== key || e.status !== 'active') continue;
    if (!best || REPLACE_RANK[e.source] > REPLACE_RANK[best.source] || (REPLACE_RANK[e.source] === REPLACE_RANK[best.source] && saidMs(e) >= saidMs(best))) best = e;
  }
  return best;
}

/** The records of one key in the order they were said, oldest first. */
export function chainOf(entities: readonly TemporalEntity[], key: string): TemporalEntity[] {
  return entities.filter((e) => e.key === key).sort((a, b) => saidMs(a) - saidMs(b) || Date.parse(a.validFrom) - Date.parse(b.validFrom));
}

function applyOne(work: Work, f: ResolvedFact): void {
  // A re-delivered job (or a kept turn read again) must change nothing.
  const known = f.evidence.length > 0 && work.entities.some((e) => e.key === f.key && valuesEqual(e.value, f.value) && f.evidence.every((id) => e.evidence.includes(id)));
  if (known) return;

  const current = currentRecord(work.entities, f.key);
  const candidates = work.entities.filter((e) => e.key === f.key && e.status === 'active' && e !== current);
  if (f.ended === true) return end(work, f, current, candidates);
  if (current && Date.parse(statedAt(f)) < saidMs(current)) return insertHistory(work, f);
  if (current && valuesEqual(current.value, f.value)) {
    confirm(work, current, f);
    if (REPLACE_RANK[f.source] > 0) for (const c of candidates) retract(work, c, current); // restating the value settles the doubt
    return;
  }
  if (current && REPLACE_RANK[f.source] < REPLACE_RANK[current.source]) {
    // A weaker value waits beside the current one; a newer weak value replaces an older candidate.
    const same = candidates.find((c) => valuesEqual(c.value, f.value));
    if (same) return confirm(work, same, f);
    const rec = newRecord(work, f, 'active', null, null, null);
    for (const c of candidates) retract(work, c, rec);
    return;
  }
  const promoted = candidates.find((c) => valuesEqual(c.value, f.value));
  const rec = promoted ?? newRecord(work, f, 'active', current?.id ?? null, null, null);
  if (promoted) {
    confirm(work, promoted, f);
    promoted.supersedes = current?.id ?? promoted.supersedes;
  }
  for (const c of candidates) if (c !== rec) retract(work, c, rec);
  if (!current) return linkAfterLast(work, rec);
  if (f.correction === true || Date.parse(f.validFrom) <= Date.parse(current.validFrom)) retract(work, current, rec);
  else supersede(work, current, rec);
}

/**
 * "I stopped taking metformin": the current record of that value ends where the statement puts
 * it (never before it began) and nothing follows it; an inferred candidate of that value is
 * dropped. Said before the current record was, or of another value, it changes nothing.
 */
function end(work: Work, f: ResolvedFact, current: TemporalEntity | undefined, candidates: readonly TemporalEntity[]): void {
  for (const c of candidates) if (valuesEqual(c.value, f.value) && c.source === 'inferred' && current) retract(work, c, current);
  if (!current || !valuesEqual(current.value, f.value) || Date.parse(statedAt(f)) < saidMs(current)) return;
  work.superseded.push(current.id);
  current.status = 'superseded';
  current.validUntil = Date.parse(f.validFrom) > Date.parse(current.validFrom) ? f.validFrom : current.validFrom;
  for (const id of f.evidence) if (!current.evidence.includes(id)) current.evidence.push(id);
}

function supersede(work: Work, old: TemporalEntity, by: TemporalEntity): void {
  if (old.status === 'active') work.superseded.push(old.id);
  old.status = 'superseded';
  old.validUntil = by.validFrom;
  old.supersededBy = by.id;
}

/** A retracted value never held as stated: its bar ends where it starts or where its replacement starts, whichever is later. */
function retract(work: Work, old: TemporalEntity, by: TemporalEntity): void {
  if (old.status === 'active') work.retracted.push(old.id);
  old.status = 'retracted';
  old.validUntil = Date.parse(by.validFrom) > Date.parse(old.validFrom) ? by.validFrom : old.validFrom;
  old.supersededBy = by.id;
}

/** With no active record (none yet, or the last one expired/was replaced), the new record continues the key's history. */
function linkAfterLast(work: Work, rec: TemporalEntity): void {
  const prev = chainOf(work.entities, rec.key)
    .filter((e) => e !== rec && e.supersededBy === null)
    .at(-1);
  if (prev) rec.supersedes = prev.id;
}

/**
 * A statement made before the current one was (a late turn): it never becomes current. On the
 * world-time line of the key's held values it confirms the value in force then, starts an equal
 * successor earlier, or is inserted as a superseded record between its neighbours.
 */
function insertHistory(work: Work, f: ResolvedFact): void {
  const t = Date.parse(f.validFrom);
  const line = work.entities
    .filter((e) => e.key === f.key && e.status !== 'retracted' && !(e.status === 'active' && e.source === 'inferred'))
    .sort((a, b) => Date.parse(a.validFrom) - Date.parse(b.validFrom));
  let p = -1;
  line.forEach((e, i) => {
    if (Date.parse(e.validFrom) <= t) p = i;
  });
  const pred = p >= 0 ? line[p] : undefined;
  const succ = line[p + 1];
  if (pred && valuesEqual(pred.value, f.value)) return confirm(work, pred, f);
  if (!succ) return void newRecord(work, f, 'retracted', null, null, f.validFrom);
  if (valuesEqual(succ.value, f.value)) {
    succ.validFrom = f.validFrom;
    if (pred) pred.validUntil = f.validFrom;
    return confirm(work, succ, f);
  }
  const rec = newRecord(work, f, 'superseded', pred?.id ?? null, succ.id, succ.validFrom);
  succ.supersedes = rec.id;
  if (pred) {
    pred.validUntil = f.validFrom;
    pred.supersededBy = rec.id;
  }
}

function confirm(work: Work, rec: TemporalEntity, f: ResolvedFact): void {
  const fresh = f.evidence.filter((id) => !rec.evidence.includes(id));
  rec.evidence.push(...new Set(fresh));
  if (CONFIDENCE_ORDER[f.source] > CONFIDENCE_ORDER[rec.source]) rec.source = f.source;
  if (fresh.length > 0 && rec.status === 'active' && rec.category === 'ephemeral' && rec.expiresAt !== null) {
    const renewed = expiryOf(work, f);
    if (renewed !== null && Date.parse(renewed) > Date.parse(rec.expiresAt)) rec.expiresAt = renewed;
  }
}

function newRecord(work: Work, f: ResolvedFact, status: TemporalEntity['status'], supersedes: string | null, supersededBy: string | null, validUntil: string | null): TemporalEntity {
  const rec: TemporalEntity = {
    id: uniqueId(work, work.opts.idFor(f)),
    key: f.key,
    field: f.field.name,
    value: cloneValue(f.value),
    category: f.field.category,
    status,
    source: f.source,
    validFrom: f.validFrom,
    validUntil,
    recordedAt: iso(work.opts.now),
    statedAt: statedAt(f),
    expiresAt: expiryOf(work, f),
    supersedes,
    supersededBy,
    evidence: [...new Set(f.evidence)],
  };
  work.entities.push(rec);
  work.ids.add(rec.id);
  work.inserted.push(rec.id);
  return rec;
}

/** A profile entry written before the timeline existed gets a record first, so ordering applies to it. */
function seedLegacyProfile(work: Work, entry: ProfileEntry | undefined, f: ResolvedFact): void {
  if (!entry || work.entities.some((e) => e.key === f.key)) return;
  if (Number.isNaN(Date.parse(entry.updatedAt))) return;
  const seed: ResolvedFact = { key: f.key, field: f.field, value: entry.value, source: entry.source, validFrom: entry.updatedAt, evidence: [...entry.evidence] };
  newRecord(work, seed, 'active', null, null, null);
}

/**
 * An ephemeral value lasts `ttlHours` past the moment it is about: a date or time
 * value (a site visit, a callback) counts from that moment, anything else from
 * when it was said. World time, not extraction time: a visit booked for 10 January
 * is gone by the 11th however late the extraction ran.
 */
function expiryOf(work: Work, f: ResolvedFact): string | null {
  if (f.field.category !== 'ephemeral') return null;
  const ttlMs = (f.field.ttlHours ?? work.opts.defaultTtlHours) * HOUR_MS;
  const about = f.field.type === 'date' || f.field.type === 'datetime' ? Date.parse(String(f.value)) : Number.NaN;
  const said = Date.parse(statedAt(f));
  const from = Number.isFinite(about) ? about : Number.isFinite(said) ? said : work.opts.now;
  return iso(from + ttlMs);
}

/** idFor hashes key+value+validFrom; the same triple can recur after a flip-flop, so disambiguate deterministically. */
function uniqueId(work: Work, base: string): string {
  let id = base;
  for (let n = 2; work.ids.has(id); n++) id = `${base}~${n}`;
  return id;
}

function statedAt(f: ResolvedFact): string {
  return f.statedAt ?? f.validFrom;
}

/** When a record was said; records written before `statedAt` existed fall back to their world time. */
function saidMs(e: TemporalEntity): number {
  const ms = Date.parse(e.statedAt ?? e.validFrom);
  return Number.isNaN(ms) ? 0 : ms;
}

function worldMs(s: string, what: string, code: 'bad_request' | 'internal'): number {
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) throw new MemgateError(code, `${what}: "${s}" is not an ISO-8601 time`);
  return ms;
}

function cloneEntity(e: TemporalEntity): TemporalEntity {
  return { ...e, value: cloneValue(e.value), evidence: [...e.evidence] };
}

function cloneValue(v: FactValue): FactValue {
  return typeof v === 'object' ? { ...v } : v;
}
