import type { FactValue, OutdatedMark, TemporalEntity } from '../core/types.ts';
import { calendarDates } from '../text/calendar-dates.ts';
import { findMoney } from '../text/money.ts';
import { currentRecord, isExpired } from './supersession.ts';
import { formatValue, isMoney, valuesEqual } from '../text/values.ts';

/**
 * One fact-state model for every reader (docs/protocol.md, Memory semantics): the context
 * block, `facts`/`possibly`, and search all ask here whether a text or a turn states a
 * value that no longer holds, and what holds now. Current truth is the key's current
 * record (supersession.ts); anything superseded, retracted or expired is history.
 */

/** A record that no longer holds: superseded, retracted, or an ephemeral past its TTL. */
export function isStale(e: TemporalEntity, now: number): boolean {
  return e.status === 'superseded' || e.status === 'retracted' || (e.status === 'active' && isExpired(e, now));
}

/** What a reader needs to judge texts against the timeline, computed once per read. */
export interface FactState {
  now: number;
  /** key → its current record (unexpired). */
  current: Map<string, TemporalEntity>;
  /** Stale records whose value differs from their key's current value, newest statement first. */
  stale: TemporalEntity[];
  /** Turn ids that evidence a live (current or candidate) record, per key. */
  liveEvidence: Map<string, Set<string>>;
}

/** Index the timeline for outdated checks as of `now`. */
export function factState(entities: readonly TemporalEntity[], now: number): FactState {
  const current = new Map<string, TemporalEntity>();
  const liveEvidence = new Map<string, Set<string>>();
  for (const key of new Set(entities.map((e) => e.key))) {
    const cur = currentRecord(entities, key);
    if (cur && !isExpired(cur, now)) current.set(key, cur);
  }
  for (const e of entities) {
    if (e.status !== 'active' || isExpired(e, now)) continue;
    const ids = liveEvidence.get(e.key) ?? new Set<string>();
    for (const id of e.evidence) ids.add(id);
    liveEvidence.set(e.key, ids);
  }
  const stale = entities
    .filter((e) => isStale(e, now) && !(current.has(e.key) && valuesEqual(current.get(e.key)!.value, e.value)))
    .sort((a, b) => Date.parse(b.statedAt ?? b.recordedAt) - Date.parse(a.statedAt ?? a.recordedAt));
  return { now, current, stale, liveEvidence };
}

/**
 * The outdated marks of a text: a key whose stale value the text evidences (one of its turns
 * is the stale record's evidence and none evidences the key's live value) or states (the value
 * is written in it). One mark per key, `now` the current value. A mark says the text's value no
 * longer holds, so it is made only when that is true of the text:
 * - a text that also states the key's current value ("went up from 50 to 80 lakhs") tells of the
 *   change, and is current;
 * - a text said (`saidAt`, epoch ms) once a value had stopped holding with nothing in its place
 *   tells of its end ("I stopped taking metformin last week");
 * - a text said once an ephemeral value's time had already passed ("I moved in last month") tells
 *   of a past event, which stays true: its expiry is no news to the text.
 */
export function outdatedMarks(state: FactState, text: string, turnRefs: readonly string[], saidAt?: number): OutdatedMark[] {
  const marks: OutdatedMark[] = [];
  const seen = new Set<string>();
  for (const e of state.stale) {
    if (seen.has(e.key)) continue;
    const cur = state.current.get(e.key);
    if (cur && mentionsValue(text, cur.value)) continue;
    if (!cur && saidAt !== undefined && e.validUntil !== null && saidAt >= Date.parse(e.validUntil)) continue;
    if (e.status === 'active' && saidAt !== undefined && e.expiresAt !== null && saidAt >= Date.parse(e.expiresAt)) continue;
    const live = state.liveEvidence.get(e.key);
    const evidenced = turnRefs.some((id) => e.evidence.includes(id)) && !turnRefs.some((id) => live?.has(id));
    const stated = mentionsValue(text, e.value);
    if (!evidenced && !stated) continue;
    seen.add(e.key);
    marks.push({ key: e.key, now: cur ? cur.value : null });
  }
  return marks;
}

/** "budget is now ₹80 lakh (INR 8,000,000)", "site visit has expired", "city no longer current". */
export function outdatedNote(state: FactState, mark: OutdatedMark): string {
  const name = keyLabel(mark.key);
  // The documented form (docs/protocol.md, Memory semantics): `[outdated: budget is now ₹80 lakh]`.
  if (mark.now !== null) return `${name} is now ${formatValue(mark.now)}`;
  const expired = state.stale.some((e) => e.key === mark.key && e.status === 'active');
  return expired ? `${name} has expired` : `${name} no longer current`;
}

/** A text with its outdated marks appended: `… [outdated: budget is now ₹80 lakh]`. */
export function annotate(state: FactState, text: string, marks: readonly OutdatedMark[]): string {
  return marks.length === 0 ? text : `${text} [outdated: ${marks.map((m) => outdatedNote(state, m)).join('; ')}]`;
}

/** `budget` → "budget", `property_status:12 mg road` → "property status (12 mg road)". */
export function keyLabel(key: string): string {
  const i = key.indexOf(':');
  const field = (i < 0 ? key : key.slice(0, i)).replace(/_/g, ' ');
  return i < 0 ? field : `${field} (${key.slice(i + 1)})`;
}

/**
 * Does `text` state `value`? Money by amount (any written form: "50 lakhs", "₹50,00,000",
 * "5 million"), dates by calendar date, numbers by their digits, strings as whole words.
 * Deliberately strict: a false mark would hide a true statement behind "[outdated]".
 */
export function mentionsValue(text: string, value: FactValue): boolean {
  if (isMoney(value)) return findMoney(text, value.currency).some((s) => s.marked && Math.abs(s.money.amount - value.amount) < 0.5);
  if (typeof value === 'boolean') return false;
  if (typeof value === 'number') return Number.isFinite(value) && Math.abs(value) >= 10 && new RegExp(`(?<![\\d.,])${escapeRe(String(value))}(?![\\d])`).test(text.replace(/(\d),(\d)/g, '$1$2'));
  const date = /^(\d{4})-(\d{2})-(\d{2})/.exec(value);
  if (date) {
    if (text.includes(date[0])) return true;
    const [y, m, d] = [date[1], Number(date[2]), Number(date[3])];
    return calendarDates(text).dates.some((c) => c.month === m && c.day === d && (c.year === undefined || c.year === y));
  }
  const needle = value.replace(/\s+/g, ' ').trim().toLowerCase();
  if (needle.length < 3) return false;
  return new RegExp(`(?<![\\p{L}\\p{N}])${escapeRe(needle)}(?![\\p{L}\\p{N}])`, 'u').test(text.replace(/\s+/g, ' ').toLowerCase());
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
