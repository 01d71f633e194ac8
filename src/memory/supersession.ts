import { iso } from '../core/clock.ts';
import { MemgateError } from '../core/errors.ts';
import type { FieldDef } from '../core/schema.ts';
import type { FactSource, FactValue, ProfileEntry, TemporalEntity } from '../core/types.ts';
import { valuesEqual } from './values.ts';

/** A stage-1 fact validated against the schema: keyed, normalised, with its world time and evidence turn ids. */
export interface ResolvedFact {
  key: string;
  field: FieldDef;
  value: FactValue;
  source: FactSource;
  /** World time (ISO) the fact became true. */
  validFrom: string;
  evidence: string[];
}

/** The part of the hot document stage 2 rewrites. */
export interface MemoryState {
  entities: TemporalEntity[];
  profile: Record<string, ProfileEntry>;
}

/** Merge knobs; `idFor` must be deterministic so a re-delivered job produces the same ids. */
export interface MergeOptions {
  /** System time of the extraction (epoch ms): `recordedAt` and the start of an ephemeral TTL. */
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
  /** Profile keys whose value or source changed (or that were created). */
  profileUpdated: string[];
}

const HOUR_MS = 3_600_000;
/** explicit and confirmed are both ground truth; only inferred is weaker. */
const SOURCE_RANK: Record<FactSource, number> = { inferred: 0, explicit: 1, confirmed: 1 };

interface Work {
  entities: TemporalEntity[];
  ids: Set<string>;
  inserted: string[];
  superseded: string[];
  opts: MergeOptions;
}

/**
 * Stages 2A/2B (DESIGN.md §3): profile merge and temporal supersession, pure.
 * Facts are applied in world-time order to a per-key chain kept in world-time
 * order and doubly linked (supersedes / supersededBy). Nothing is deleted.
 * - Idempotent: a fact whose evidence is already on a same-key same-value record changes nothing.
 * - A fact later in world time than the active record supersedes it (or, same value, confirms it).
 * - A fact earlier than the active record never replaces the current value: it confirms
 *   the record in force at that time, moves an equal successor's start earlier, or is
 *   inserted as a historical (superseded) record between its neighbours.
 * - Ephemeral TTL runs from `recordedAt` (when the system learned it), not from
 *   `validFrom`: a late extraction of an old appointment is still shown for one TTL,
 *   never hidden before anyone could see it. A restated ephemeral fact renews its TTL.
 * - Profile fields get the same timeline (category 'profile'); the profile entry is a
 *   projection of the key's active record, so last-write-wins is by world time and
 *   `ProfileEntry.updatedAt` is the world time of the current value.
 */
export function applyFacts(state: MemoryState, facts: readonly ResolvedFact[], opts: MergeOptions): MergeResult {
  const entities = state.entities.map(cloneEntity);
  const work: Work = { entities, ids: new Set(entities.map((e) => e.id)), inserted: [], superseded: [], opts };
  const profile: Record<string, ProfileEntry> = {};
  for (const [k, e] of Object.entries(state.profile)) profile[k] = { ...e, value: cloneValue(e.value), evidence: [...e.evidence] };

  const ordered = facts
    .map((f, i) => ({ f, t: worldMs(f.validFrom, `fact ${f.key}`, 'bad_request'), i }))
    .sort((a, b) => a.t - b.t || a.i - b.i);
  const profileKeys = new Set<string>();
  for (const { f, t } of ordered) {
    if (f.field.category === 'profile') {
      seedLegacyProfile(work, profile[f.key], f);
      profileKeys.add(f.key);
    }
    applyOne(work, f, t);
  }

  const profileUpdated: string[] = [];
  for (const key of profileKeys) {
    const active = chainOf(entities, key).at(-1);
    if (!active || active.status !== 'active') continue;
    const prev = state.profile[key];
    if (!prev || !valuesEqual(prev.value, active.value) || prev.source !== active.source) profileUpdated.push(key);
    profile[key] = { value: cloneValue(active.value), updatedAt: active.validFrom, source: active.source, evidence: [...active.evidence] };
  }

  const byId = new Map(entities.map((e) => [e.id, e]));
  const pick = (ids: string[]): TemporalEntity[] => ids.map((id) => byId.get(id)).filter((e): e is TemporalEntity => e !== undefined);
  return { entities, profile, inserted: pick(work.inserted), superseded: pick(work.superseded), profileUpdated };
}

/** True once an ephemeral record's TTL has passed: hidden from context, never deleted. */
export function isExpired(e: TemporalEntity, now: number): boolean {
  return e.expiresAt !== null && Date.parse(e.expiresAt) <= now;
}

/** Records session start may show: active and not expired. */
export function activeEntities(entities: readonly TemporalEntity[], now: number): TemporalEntity[] {
  return entities.filter((e) => e.status === 'active' && !isExpired(e, now));
}

/** The records of one key in world-time order, oldest first, following the links back from the active one. */
export function chainOf(entities: readonly TemporalEntity[], key: string): TemporalEntity[] {
  const same = entities.filter((e) => e.key === key);
  if (same.length === 0) return [];
  const byId = new Map(same.map((e) => [e.id, e]));
  const actives = same.filter((e) => e.status === 'active');
  // A well-formed chain has one active tail; tolerate damaged data rather than throw on a read path.
  let tail = actives.length > 0 ? latest(actives) : same.find((e) => e.supersededBy === null || !byId.has(e.supersededBy));
  tail ??= latest(same);
  const chain: TemporalEntity[] = [];
  const seen = new Set<string>();
  for (let cur: TemporalEntity | undefined = tail; cur && !seen.has(cur.id); cur = cur.supersedes === null ? undefined : byId.get(cur.supersedes)) {
    seen.add(cur.id);
    chain.push(cur);
  }
  return chain.reverse();
}

function applyOne(work: Work, f: ResolvedFact, t: number): void {
  // A re-delivered job (or a kept turn read again) must change nothing.
  const known = f.evidence.length > 0 && work.entities.some((e) => e.key === f.key && valuesEqual(e.value, f.value) && f.evidence.every((id) => e.evidence.includes(id)));
  if (known) return;

  const chain = chainOf(work.entities, f.key);
  let p = -1;
  chain.forEach((e, i) => {
    if (worldMs(e.validFrom, `entity ${e.id}`, 'internal') <= t) p = i;
  });
  const pred = p >= 0 ? chain[p] : undefined;
  const succ = chain[p + 1];

  if (pred && valuesEqual(pred.value, f.value)) return confirm(work, pred, f);
  if (!succ) return insertActive(work, f, pred);
  if (valuesEqual(succ.value, f.value)) {
    // The value held earlier than we knew: start it earlier instead of repeating it.
    succ.validFrom = f.validFrom;
    if (pred) pred.validUntil = f.validFrom;
    return confirm(work, succ, f);
  }
  insertHistorical(work, f, pred, succ);
}

function insertActive(work: Work, f: ResolvedFact, pred: TemporalEntity | undefined): void {
  const rec = newRecord(work, f, 'active', pred?.id ?? null, null, null);
  if (pred) {
    if (pred.status === 'active') work.superseded.push(pred.id);
    pred.status = 'superseded';
    pred.validUntil = f.validFrom;
    pred.supersededBy = rec.id;
  }
}

/** Out-of-order world time: the fact sits between `pred` (maybe none) and `succ` in the chain. */
function insertHistorical(work: Work, f: ResolvedFact, pred: TemporalEntity | undefined, succ: TemporalEntity): void {
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
  if (SOURCE_RANK[f.source] > SOURCE_RANK[rec.source]) rec.source = f.source;
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

/** A profile entry written before the timeline existed gets a record first, so world-time ordering applies to it. */
function seedLegacyProfile(work: Work, entry: ProfileEntry | undefined, f: ResolvedFact): void {
  if (!entry || work.entities.some((e) => e.key === f.key)) return;
  if (Number.isNaN(Date.parse(entry.updatedAt))) return;
  const seed: ResolvedFact = { key: f.key, field: f.field, value: entry.value, source: entry.source, validFrom: entry.updatedAt, evidence: [...entry.evidence] };
  newRecord(work, seed, 'active', null, null, null);
}

function expiryOf(work: Work, f: ResolvedFact): string | null {
  if (f.field.category !== 'ephemeral') return null;
  const ttlHours = f.field.ttlHours ?? work.opts.defaultTtlHours;
  return iso(work.opts.now + ttlHours * HOUR_MS);
}

/** idFor hashes key+value+validFrom; the same triple can recur after a flip-flop, so disambiguate deterministically. */
function uniqueId(work: Work, base: string): string {
  let id = base;
  for (let n = 2; work.ids.has(id); n++) id = `${base}~${n}`;
  return id;
}

function worldMs(s: string, what: string, code: 'bad_request' | 'internal'): number {
  const ms = Date.parse(s);
  if (Number.isNaN(ms)) throw new MemgateError(code, `${what}: validFrom "${s}" is not an ISO-8601 time`);
  return ms;
}

function latest(list: readonly TemporalEntity[]): TemporalEntity | undefined {
  let best: TemporalEntity | undefined;
  for (const e of list) if (!best || Date.parse(e.validFrom) >= Date.parse(best.validFrom)) best = e;
  return best;
}

function cloneEntity(e: TemporalEntity): TemporalEntity {
  return { ...e, value: cloneValue(e.value), evidence: [...e.evidence] };
}

function cloneValue(v: FactValue): FactValue {
  return typeof v === 'object' ? { ...v } : v;
}
