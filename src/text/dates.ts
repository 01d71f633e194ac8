/**
 * Relative and absolute date expressions in conversational English, resolved against the
 * instant a turn was said. All arithmetic is in UTC and clock times are wall-clock times
 * written as UTC ("4pm" → T16:00:00.000Z): turns carry no time zone, and a UTC reading is
 * stable and reproducible. Weeks start on Monday.
 */
import { afterSince, DATE_RULES, dayStart, ymd, type Granularity, type Hit } from './date-rules.ts';
import { findTimes, type TimeOfDay } from './times.ts';

export type { TimeOfDay } from './times.ts';
export { findTimes } from './times.ts';

export type { Granularity } from './date-rules.ts';
export { ymd } from './date-rules.ts';

/** One date expression found in a text. */
export interface DateMatch {
  start: number;
  end: number;
  text: string;
  /** YYYY-MM-DD: the day itself, or the first day of the week/month/year. */
  date: string;
  granularity: Granularity;
  /** Leading preposition that belongs to it ("since", "by", "on", "from"...), lower-case. */
  prep?: string;
  /** Clock time implied by the expression itself ("tomorrow morning" → 09:00). */
  time?: TimeOfDay;
  /** The expression already names an absolute date with a year: nothing to rewrite. */
  absolute: boolean;
  /** Self-contained replacement ("yesterday" → "on 2026-01-14", "last month" → "in December 2025"). */
  rewrite: string;
}

/** A date expression resolved to an absolute day and, when one was said, a time. */
export interface ResolvedDate {
  date: string;
  hasTime: boolean;
  /** Full ISO instant (midnight UTC when no time was said). */
  iso: string;
}

/** `past`: the clause speaks about the past, so a bare "Monday" or "March" is the last one, not the next. */
export interface DateOptions {
  past?: boolean;
}

const PREP_RE = /(?:^|[\s,])(on|by|since|from|until|till|before|after|starting|starting from|as of|in|for|through|effective|beginning)\s+$/i;

/** Every date expression in `text`, resolved against `refTs`; overlapping matches keep the longest. */
export function findDates(text: string, refTs: number, opts: DateOptions = {}): DateMatch[] {
  const today = dayStart(refTs);
  const cands: Array<{ start: number; end: number; hit: Hit }> = [];
  for (const [re, fn] of DATE_RULES) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const hit = fn(m, today, opts.past === true || afterSince(m));
      if (hit && Number.isFinite(hit.ms)) cands.push({ start: m.index, end: m.index + m[0].length, hit });
    }
  }
  cands.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start);
  const taken: typeof cands = [];
  for (const c of cands) if (!taken.some((t) => c.start < t.end && t.start < c.end)) taken.push(c);
  taken.sort((a, b) => a.start - b.start);
  return taken.map(({ start, end, hit }) => toMatch(text, start, end, hit));
}

function toMatch(text: string, start: number, end: number, hit: Hit): DateMatch {
  let prep: string | undefined;
  if (!hit.ownPrep) {
    const p = PREP_RE.exec(text.slice(Math.max(0, start - 20), start));
    if (p) {
      prep = p[1]!.toLowerCase();
      start -= p[0].length - (/^[\s,]/.test(p[0]) ? 1 : 0);
    }
  }
  const date = ymd(hit.ms);
  const label = hit.label ?? date;
  const lead = prep ?? hit.defaultPrep ?? (hit.gran === 'day' ? 'on' : 'in');
  const original = text.slice(start, end);
  const rewrite = hit.absolute ? original : `${lead}${lead ? ' ' : ''}${label}`;
  return { start, end, text: original, date, granularity: hit.gran, absolute: hit.absolute === true, rewrite, ...(prep ? { prep } : {}), ...(hit.time ? { time: hit.time } : {}) };
}

/** `text` with every relative date expression replaced by its absolute form (for ACUs). */
export function rewriteDates(text: string, refTs: number, opts: DateOptions = {}): string {
  let out = '';
  let at = 0;
  for (const m of findDates(text, refTs, opts)) {
    out += text.slice(at, m.start) + m.rewrite;
    at = m.end;
  }
  return out + text.slice(at);
}

/**
 * The date (and time) `text` names, resolved against `refTs` (epoch ms of the turn that said it):
 * the first date expression plus the first clock time. A time alone means that day. Null when
 * `text` names neither. ISO instants pass through unchanged.
 */
export function resolveDate(text: string, refTs: number, opts: DateOptions = {}): ResolvedDate | null {
  const trimmed = text.trim();
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(trimmed) && Number.isFinite(Date.parse(trimmed))) {
    const iso = new Date(Date.parse(trimmed)).toISOString();
    return { date: iso.slice(0, 10), hasTime: true, iso };
  }
  const date = findDates(text, refTs, { past: opts.past ?? looksPast(text) })[0];
  const time = findTimes(text)[0]?.time ?? date?.time;
  if (!date && !time) return null;
  const day = date ? date.date : ymd(refTs);
  const hh = String(time?.h ?? 0).padStart(2, '0');
  const mm = String(time?.m ?? 0).padStart(2, '0');
  return { date: day, hasTime: time !== undefined, iso: `${day}T${hh}:${mm}:00.000Z` };
}

const PAST_RE =
  /\b(was|were|did|had|went|got|came|saw|took|gave|started|began|stopped|moved|visited|applied|switched|quit|left|joined|bought|sold|paid|born|ago|last|yesterday|since|used to)\b|\b(?:i|we|he|she|they|you)\s+\w+ed\b/i;

/** Cheap tense test: does a clause talk about the past? Biases bare weekdays and months. */
export function looksPast(text: string): boolean {
  return PAST_RE.test(text);
}
