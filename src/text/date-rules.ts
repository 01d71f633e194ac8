/**
 * The rules behind dates.ts: one regex per kind of date expression ("next Tuesday", "in two
 * weeks", "the 15th of March", "end of next month") and how each resolves against today.
 * UTC throughout; weeks start on Monday.
 */
import { ORDINALS } from './numbers.ts';
import type { TimeOfDay } from './times.ts';

/** How precise a date expression is ("next week" is a week, "in March" a month). */
export type Granularity = 'day' | 'week' | 'month' | 'year';

/** Milliseconds per day. */
export const DAY_MS = 86_400_000;
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH_RE = '(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)';
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const WEEKDAY_RE = '(sunday|monday|tuesday|wednesday|thursday|friday|saturday)';
const COUNT_RE = '(\\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|couple of|a few|few|several)';
const UNIT_RE = '(day|week|fortnight|month|year)s?';
const PART_RE = '(morning|afternoon|evening|night)';
const ORD_RE = `(${Object.keys(ORDINALS)
  .sort((a, b) => b.length - a.length)
  .join('|')})`;
const COUNTS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  'a couple of': 2,
  'couple of': 2,
  'a few': 3,
  few: 3,
  several: 3,
};
const PART_TIME: Record<string, TimeOfDay> = { morning: { h: 9, m: 0 }, afternoon: { h: 14, m: 0 }, evening: { h: 18, m: 0 }, night: { h: 20, m: 0 } };

/** YYYY-MM-DD of an epoch-ms instant (UTC). */
export function ymd(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** UTC midnight of an instant. */
export const dayStart = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;
const weekday = (ms: number) => new Date(ms).getUTCDay();
const utc = (y: number, m: number, d: number) => Date.UTC(y, m, d);
const monthIndex = (w: string) => MONTHS.findIndex((m) => m.startsWith(w.toLowerCase().slice(0, 3)));
const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
const monthName = (ms: number) => `${cap(MONTHS[new Date(ms).getUTCMonth()] as string)} ${new Date(ms).getUTCFullYear()}`;
const count = (w: string | undefined) => (w === undefined ? 1 : (COUNTS[w.toLowerCase()] ?? Number(w)));

function addMonths(ms: number, n: number, day?: number): number {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + n;
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return utc(y, m, Math.min(day ?? d.getUTCDate(), last));
}

function addUnits(ms: number, n: number, unit: string): number {
  const u = unit.toLowerCase();
  if (u.startsWith('day')) return ms + n * DAY_MS;
  if (u.startsWith('week')) return ms + n * 7 * DAY_MS;
  if (u.startsWith('fortnight')) return ms + n * 14 * DAY_MS;
  if (u.startsWith('month')) return addMonths(ms, n);
  return addMonths(ms, 12 * n);
}

const mondayOf = (ms: number) => ms - ((weekday(ms) + 6) % 7) * DAY_MS;

/** Nearest occurrence of month `mo` (and day `d`) before or after `today`, by tense. */
function pickYear(today: number, mo: number, d: number, past: boolean): number {
  const y = new Date(today).getUTCFullYear();
  const same = utc(y, mo, d);
  if (past) return same <= today ? same : utc(y - 1, mo, d);
  return same >= today ? same : utc(y + 1, mo, d);
}

/** What a rule resolves a match to, before prepositions and rewriting are applied. */
export interface Hit {
  ms: number;
  gran: Granularity;
  /** Text after the preposition: "Friday 2026-01-16", "the week of 2026-01-19". */
  label?: string;
  /** Used when no preposition precedes it. */
  defaultPrep?: string;
  time?: TimeOfDay;
  absolute?: boolean;
  /** The rule already consumed its own preposition ("in two weeks", "for the past 3 days"). */
  ownPrep?: boolean;
}

/** A regex and the resolver of one of its matches against today (UTC midnight) and the tense. */
export type Rule = [RegExp, (m: RegExpExecArray, today: number, past: boolean) => Hit | null];

/** The words right before a match. */
const before = (m: RegExpExecArray, re: RegExp) => re.test(m.input.slice(Math.max(0, m.index - 24), m.index));
const SINCE = /\b(?:since|ever since)\s+$/i;

/** "since March" is always a past March, whatever the tense of the clause. */
export const afterSince = (m: RegExpExecArray): boolean => before(m, SINCE);
const PREPOSED = /\b(?:in|since|from|by|until|till|during|of|before|after|early|mid|late)\s+$/i;

const rx = (s: string) => new RegExp(`\\b${s}\\b`, 'gi');

/** The date expression rules: a global regex and the resolver of one of its matches. */
export const DATE_RULES: Rule[] = [
  [rx('(\\d{4})-(\\d{2})-(\\d{2})'), (m) => ({ ms: utc(+m[1]!, +m[2]! - 1, +m[3]!), gran: 'day', absolute: true })],
  [
    rx('(\\d{1,2})[/.](\\d{1,2})[/.](\\d{4}|\\d{2})'),
    (m) => {
      // Day first (the Indian and European order) unless that cannot be a month.
      let [d, mo] = [+m[1]!, +m[2]!];
      if (mo > 12 && d <= 12) [d, mo] = [mo, d];
      const y = m[3]!.length === 2 ? 2000 + +m[3]! : +m[3]!;
      return mo >= 1 && mo <= 12 && d >= 1 && d <= 31 ? { ms: utc(y, mo - 1, d), gran: 'day', absolute: true } : null;
    },
  ],
  [rx(`${MONTH_RE}\\.?\\s+(?:the\\s+)?(\\d{1,2})(?:st|nd|rd|th)?(?:,?\\s+(\\d{4}))?`), (m, t, p) => monthDay(m[1]!, +m[2]!, m[3], t, p)],
  [rx(`(?:the\\s+)?(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_RE}(?:,?\\s+(\\d{4}))?`), (m, t, p) => monthDay(m[2]!, +m[1]!, m[3], t, p)],
  [rx(`${MONTH_RE}\\s+(?:the\\s+)?${ORD_RE}(?:,?\\s+(\\d{4}))?`), (m, t, p) => monthDay(m[1]!, ORDINALS[m[2]!.toLowerCase()]!, m[3], t, p)],
  [rx(`(?:the\\s+)?${ORD_RE}\\s+(?:of\\s+)?${MONTH_RE}(?:,?\\s+(\\d{4}))?`), (m, t, p) => monthDay(m[2]!, ORDINALS[m[1]!.toLowerCase()]!, m[3], t, p)],
  [
    rx('the\\s+(\\d{1,2})(?:st|nd|rd|th)'),
    (m, t, p) => {
      const d = +m[1]!;
      if (d < 1 || d > 31) return null;
      const here = addMonths(t, 0, d);
      const ms = p ? (here <= t ? here : addMonths(t, -1, d)) : here >= t ? here : addMonths(t, 1, d);
      return { ms, gran: 'day' };
    },
  ],
  [
    rx(`(?:(early|mid|late|the\\s+end\\s+of|end\\s+of|the\\s+beginning\\s+of|beginning\\s+of|the\\s+start\\s+of|start\\s+of)\\s+)?(?:(next|last|this|coming)\\s+)?${MONTH_RE}(?:\\s+(\\d{4}))?`),
    (m, t, p) => month(m, t, p),
  ],
  [rx(`(?:the\\s+)?day\\s+after\\s+tomorrow`), (_m, t) => ({ ms: t + 2 * DAY_MS, gran: 'day' })],
  [rx(`(?:the\\s+)?day\\s+before\\s+yesterday`), (_m, t) => ({ ms: t - 2 * DAY_MS, gran: 'day' })],
  [
    rx(`(today|tonight|tomorrow|tmrw|yesterday)(?:\\s+${PART_RE})?`),
    (m, t) => {
      const w = m[1]!.toLowerCase();
      const off = w === 'yesterday' ? -1 : w.startsWith('t') && w !== 'today' && w !== 'tonight' ? 1 : 0;
      return partHit(t + off * DAY_MS, w === 'tonight' ? 'night' : m[2]);
    },
  ],
  [rx(`this\\s+${PART_RE}`), (m, t) => partHit(t, m[1])],
  [rx('last\\s+night'), (_m, t) => partHit(t - DAY_MS, 'night')],
  [
    rx(`(?:(next|this\\s+coming|coming|this|last|past)\\s+)?${WEEKDAY_RE}(?!s)(?:\\s+(next\\s+week|after\\s+next))?(?:\\s+${PART_RE})?`),
    (m, t, p) => {
      const target = WEEKDAYS.indexOf(m[2]!.toLowerCase());
      const q = (m[1] ?? '').toLowerCase().replace(/\s+/g, ' ');
      const now = weekday(t);
      let ms: number;
      if (q === 'last' || q === 'past') ms = t - (((now - target + 6) % 7) + 1) * DAY_MS;
      else if (p && q === '') ms = t - ((now - target + 7) % 7) * DAY_MS;
      else ms = t + (((target - now + 6) % 7) + 1) * DAY_MS;
      if (m[3]) ms = mondayOf(t) + (m[3].toLowerCase().startsWith('after') ? 14 : 7) * DAY_MS + ((target + 6) % 7) * DAY_MS;
      const hit = partHit(ms, m[4]);
      return { ...hit, label: `${cap(m[2]!.toLowerCase())} ${hit.label ?? ymd(ms)}` };
    },
  ],
  [rx(`in\\s+(?:another\\s+)?${COUNT_RE}\\s+${UNIT_RE}(?:'?\\s*time)?`), (m, t) => ({ ms: addUnits(t, count(m[1]), m[2]!), gran: 'day', ownPrep: true })],
  [rx(`${COUNT_RE}\\s+${UNIT_RE}\\s+(?:from\\s+now|from\\s+today|later)`), (m, t) => ({ ms: addUnits(t, count(m[1]), m[2]!), gran: 'day', ownPrep: true })],
  [rx(`${COUNT_RE}\\s+${UNIT_RE}\\s+(?:ago|back)`), (m, t) => ({ ms: addUnits(t, -count(m[1]), m[2]!), gran: 'day', ownPrep: true })],
  [
    rx(`(?:after|within)\\s+(?:the\\s+next\\s+)?${COUNT_RE}\\s+${UNIT_RE}`),
    (m, t) => {
      const ms = addUnits(t, count(m[1]), m[2]!);
      return { ms, gran: 'day', ownPrep: true, label: `${/^within/i.test(m[0]) ? 'by' : 'after'} ${ymd(ms)}`, defaultPrep: '' };
    },
  ],
  [
    rx(`(?:for|over|in|during)\\s+the\\s+(?:past|last)\\s+(?:${COUNT_RE}\\s+)?${UNIT_RE}`),
    (m, t) => {
      const ms = addUnits(t, -count(m[1]), m[2]!);
      return { ms, gran: 'day', ownPrep: true, label: `since ${ymd(ms)}`, defaultPrep: '' };
    },
  ],
  [rx(`(?:the\\s+)?week\\s+after\\s+next`), (_m, t) => weekHit(mondayOf(t) + 14 * DAY_MS)],
  [rx('(?:(next|last|this|coming|past|previous|following)\\s+)(week|weekend|month|year)'), (m, t) => period(m[1]!, m[2]!, t)],
  [rx('(?:the\\s+)?(end|beginning|start|middle)\\s+of\\s+(?:the\\s+|this\\s+)?(?:(next|last)\\s+)?(week|month|year)'), (m, t) => edgeOf(m[1]!, m[2], m[3]!, t)],
  [rx('(?<=\\b(?:since|from|in|during|by)\\s+)((?:19|20)\\d{2})'), (m) => ({ ms: utc(+m[1]!, 0, 1), gran: 'year', absolute: true })],
];

function monthDay(mon: string, d: number, year: string | undefined, today: number, past: boolean): Hit | null {
  const mo = monthIndex(mon);
  if (mo < 0 || d < 1 || d > 31) return null;
  if (year) return { ms: utc(+year, mo, d), gran: 'day', absolute: true };
  return { ms: pickYear(today, mo, d, past), gran: 'day' };
}

function month(m: RegExpExecArray, today: number, past: boolean): Hit | null {
  const edge = (m[1] ?? '')
    .toLowerCase()
    .replace(/^the\s+/, '')
    .replace(/\s+of$/, '');
  const q = (m[2] ?? '').toLowerCase();
  const name = m[3]!;
  // "may" is a modal verb far more often than a month; "mar"/"jan" etc. only as whole words.
  const anchored = Boolean(edge || q || m[4]) || before(m, PREPOSED);
  if (name.toLowerCase() === 'may' && (name !== 'May' || !anchored)) return null;
  if (name.length <= 4 && !/^(june|july|sept)$/i.test(name) && !anchored) return null;
  const mo = monthIndex(name);
  const y = new Date(today).getUTCFullYear();
  const cur = new Date(today).getUTCMonth();
  let year = m[4] ? +m[4] : y;
  if (!m[4]) {
    if (q === 'next') year = mo > cur ? y : y + 1;
    else if (q === 'last') year = mo < cur ? y : y - 1;
    else if (q !== 'this') year = past ? (mo <= cur ? y : y - 1) : mo >= cur ? y : y + 1;
  }
  const day = edge === 'mid' || edge === 'middle' ? 15 : edge === 'late' ? 20 : edge === 'end' ? new Date(Date.UTC(year, mo + 1, 0)).getUTCDate() : 1;
  const ms = utc(year, mo, day);
  const label = `${edge === 'end' ? 'the end of ' : edge === 'early' || edge === 'mid' || edge === 'late' ? `${edge} ` : ''}${monthName(ms)}`;
  return { ms, gran: edge === 'end' ? 'day' : 'month', label, defaultPrep: edge === 'end' ? 'by' : 'in', absolute: Boolean(m[4]) };
}

function partHit(ms: number, part: string | undefined): Hit {
  const p = part?.toLowerCase();
  if (!p) return { ms, gran: 'day' };
  return { ms, gran: 'day', time: PART_TIME[p], label: `the ${p} of ${ymd(ms)}` };
}

const weekHit = (ms: number): Hit => ({ ms, gran: 'week', label: `the week of ${ymd(ms)}`, defaultPrep: 'in' });

function period(q: string, unit: string, today: number): Hit | null {
  const dir = /^(next|coming|following)$/i.test(q) ? 1 : /^(last|past|previous)$/i.test(q) ? -1 : 0;
  const u = unit.toLowerCase();
  if (u === 'week') return weekHit(mondayOf(today) + dir * 7 * DAY_MS);
  if (u === 'weekend') {
    const sat = mondayOf(today) + (5 + dir * 7) * DAY_MS;
    return { ms: sat, gran: 'day', label: `the weekend of ${ymd(sat)}` };
  }
  if (u === 'month') {
    const ms = addMonths(utc(new Date(today).getUTCFullYear(), new Date(today).getUTCMonth(), 1), dir, 1);
    return { ms, gran: 'month', label: monthName(ms), defaultPrep: 'in' };
  }
  const year = new Date(today).getUTCFullYear() + dir;
  return { ms: utc(year, 0, 1), gran: 'year', label: String(year), defaultPrep: 'in' };
}

function edgeOf(edge: string, q: string | undefined, unit: string, today: number): Hit {
  const dir = q?.toLowerCase() === 'next' ? 1 : q?.toLowerCase() === 'last' ? -1 : 0;
  const e = edge.toLowerCase();
  const u = unit.toLowerCase();
  let start: number;
  let end: number;
  if (u === 'week') {
    start = mondayOf(today) + dir * 7 * DAY_MS;
    end = start + 4 * DAY_MS; // the working week ends on Friday
  } else if (u === 'month') {
    start = addMonths(utc(new Date(today).getUTCFullYear(), new Date(today).getUTCMonth(), 1), dir, 1);
    end = addMonths(start, 1, 1) - DAY_MS;
  } else {
    start = utc(new Date(today).getUTCFullYear() + dir, 0, 1);
    end = utc(new Date(today).getUTCFullYear() + dir, 11, 31);
  }
  const ms = e === 'end' ? end : e === 'middle' ? start + Math.floor((end - start) / DAY_MS / 2) * DAY_MS : start;
  const what = u === 'week' ? `the week of ${ymd(start)}` : u === 'month' ? monthName(start) : String(new Date(start).getUTCFullYear());
  return { ms, gran: 'day', label: `the ${e} of ${what} (${ymd(ms)})`, defaultPrep: e === 'end' ? 'by' : 'at' };
}
