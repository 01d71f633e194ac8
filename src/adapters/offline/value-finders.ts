import type { FactValue } from '../../core/types.ts';
import { DAY_MS } from '../../text/date-rules.ts';
import { findDates, findTimes, ymd, type DateMatch } from '../../text/dates.ts';
import { findMoney } from '../../text/money.ts';
import { parseBoolean } from '../../text/values.ts';
import type { CompiledField } from './field-cues.ts';

/** A typed value found in a clause, with its span (for distance to cues and for masking). */
export interface Candidate {
  start: number;
  end: number;
  value: FactValue;
  /** Money: a currency or scale word marks it. Enum: the mention was not negated. */
  marked: boolean;
}

/** Money amounts in a clause, in `currency` when nothing names one. */
export function moneyCandidates(text: string, currency: string): Candidate[] {
  return findMoney(text, currency).map((s) => ({ start: s.start, end: s.end, value: s.money, marked: s.marked }));
}

/** Date (and date-time) values in a clause: each date expression joined with the clock time next to it. */
export function dateCandidates(text: string, refTs: number, past: boolean, withTime: boolean): Candidate[] {
  const dates = findDates(text, refTs, { past });
  const times = findTimes(text);
  const out: Candidate[] = [];
  const usedTimes = new Set<number>();
  for (const d of dates) {
    if (d.granularity !== 'day' && withTime) continue; // "next week" is no appointment time
    const t = times.findIndex((tm, i) => !usedTimes.has(i) && (Math.abs(tm.start - d.end) <= 12 || Math.abs(d.start - tm.end) <= 12));
    const time = t >= 0 ? times[t]!.time : d.time;
    if (t >= 0) usedTimes.add(t);
    const start = Math.min(d.start, t >= 0 ? times[t]!.start : d.start);
    const end = Math.max(d.end, t >= 0 ? times[t]!.end : d.end);
    out.push({ start, end, value: withTime ? isoOf(d.date, time) : d.date, marked: true });
  }
  if (withTime) {
    // A time alone ("at 4pm") is that day.
    times.forEach((tm, i) => {
      if (!usedTimes.has(i)) out.push({ start: tm.start, end: tm.end, value: isoOf(new Date(refTs).toISOString().slice(0, 10), tm.time), marked: false });
    });
  }
  return out.sort((a, b) => a.start - b.start);
}

function isoOf(date: string, time: { h: number; m: number } | undefined): string {
  const hh = String(time?.h ?? 0).padStart(2, '0');
  const mm = String(time?.m ?? 0).padStart(2, '0');
  return `${date}T${hh}:${mm}:00.000Z`;
}

const LAST_PERIOD_RE = /\b(?:last|past|previous)\s+(week|month|year)\s*$/i;

/**
 * Date expressions that say when something started or changes ("since March", "from next month",
 * "two weeks ago"). A change dated by a past period ("moved last month") counts back from the
 * turn: one month before it, not the first of the previous month.
 */
export function changeDate(text: string, refTs: number, past: boolean, exclude: readonly Candidate[]): DateMatch | null {
  const dayEnd = Math.floor(refTs / DAY_MS) * DAY_MS + DAY_MS;
  for (const d of findDates(text, refTs, { past })) {
    if (exclude.some((c) => d.start < c.end && c.start < d.end)) continue;
    const since = d.prep !== undefined && /^(since|from|starting|starting from|as of|effective|beginning)$/.test(d.prep);
    if (!since && !(past && Date.parse(d.date) < dayEnd && !/^(until|till|by|before)$/.test(d.prep ?? ''))) continue;
    const period = LAST_PERIOD_RE.exec(d.text);
    return period ? { ...d, date: ymd(countBack(refTs, period[1]!.toLowerCase())), granularity: 'day' } : d;
  }
  return durationStart(text, refTs);
}

const DURATION_RE =
  /\b(?:i've|i have|we've|we have|i'd been|been)\b[^.;]*?\bfor\s+(?:the\s+(?:past|last)\s+)?(?:about\s+|around\s+|almost\s+|nearly\s+|over\s+|roughly\s+)?(\d+|an?|a couple of|a few)\s+(day|week|fortnight|month|year)s?\b/i;
const FEW: Record<string, number> = { a: 1, an: 1, 'a couple of': 2, 'a few': 3 };

/** "I've been living in Mysore for two months": the state began that long before the turn. */
function durationStart(text: string, refTs: number): DateMatch | null {
  const m = DURATION_RE.exec(text);
  if (!m) return null;
  const n = FEW[m[1]!.toLowerCase()] ?? Number(m[1]);
  const unit = m[2]!.toLowerCase();
  let ms = refTs;
  for (let i = 0; i < n && i < 100; i++) ms = unit === 'day' ? ms - DAY_MS : unit === 'fortnight' ? ms - 14 * DAY_MS : countBack(ms, unit);
  const start = m.index + m[0].toLowerCase().lastIndexOf('for');
  const date = ymd(ms);
  return { start, end: m.index + m[0].length, text: m[0].slice(start - m.index), date, granularity: 'day', absolute: false, rewrite: `since ${date}`, prep: 'since' };
}

/** The day one week, month or year before `refTs` (UTC), the month clamped to its last day. */
function countBack(refTs: number, unit: string): number {
  if (unit === 'week') return refTs - 7 * DAY_MS;
  const d = new Date(refTs);
  const months = unit === 'month' ? 1 : 12;
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() - months;
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return Date.UTC(y, m, Math.min(d.getUTCDate(), last));
}

/** Plain numbers in a clause outside `masked` spans (money, dates, times are not counts). */
export function numberCandidates(text: string, masked: ReadonlyArray<{ start: number; end: number }>): Candidate[] {
  const out: Candidate[] = [];
  for (const m of text.matchAll(/(?<![\d.,:])(\d+(?:\.\d+)?)(?![\d:]|\.\d|,\d{2,3})/g)) {
    const start = m.index ?? 0;
    const end = start + m[0].length;
    if (masked.some((s) => start < s.end && s.start < end)) continue;
    out.push({ start, end, value: Number(m[1]), marked: true });
  }
  return out;
}

const NEGATION_RE = /\b(no|not|never|none|without|no longer|nobody|nothing|neither|nor|quit|stopped|gave up)\b|n't\b/i;

/** Enum value mentions in a clause; a mention preceded by a negation ("haven't applied") is unmarked. */
export function enumCandidates(cf: CompiledField, text: string): Candidate[] {
  const out: Candidate[] = [];
  for (const v of cf.values) {
    v.re.lastIndex = 0;
    for (let m = v.re.exec(text); m; m = v.re.exec(text)) {
      const before = text.slice(Math.max(0, m.index - 24), m.index);
      const negated = !v.negative && NEGATION_RE.test(before.split(/[,;]/).at(-1) ?? '');
      out.push({ start: m.index, end: m.index + m[0].length, value: v.value, marked: !negated });
    }
  }
  // "I haven't applied" names `not_applied` when the schema has it: a negated X becomes not_X.
  for (const c of out.filter((o) => !o.marked)) {
    const neg = cf.values.find((v) => v.negative && v.value.toLowerCase().replace(/^(not|no|non|un)[\s_-]*/, '') === String(c.value).toLowerCase());
    if (neg) out.push({ ...c, value: neg.value, marked: true });
  }
  return out.filter((c) => c.marked).sort((a, b) => a.start - b.start || b.end - a.end);
}

/**
 * Polarity of a sentence that mentions a boolean field's cue: any negation or former state in
 * it ("no pets", "I don't smoke", "used to have a dog but not anymore") → false, else true.
 */
export function sentencePolarity(sentence: string): boolean {
  return !NEGATION_RE.test(sentence) && !/\b(?:used to|anymore|any more)\b/i.test(sentence);
}

/** The polarity of a direct answer to a yes/no question ("No, we don't", "Yes, one dog"), or null. */
export function answerPolarity(answer: string): boolean | null {
  const first = answer.trim().split(/[,.!?;]/)[0] ?? '';
  return parseBoolean(first) ?? parseBoolean(answer);
}

// "went up from 50 lakhs to 80", "moved my appointment from Monday to Friday": a change names both states.
const CHANGE_VERB_RE =
  /\b(?:went|gone|goes|go|came|come|moved?|changed?|increased?|raised?|reduced?|decreased?|dropped?|cut|bumped|upped|revised|grew|grown|rose|risen|fell|fallen|shifted|switched|upgraded|downgraded|jumped|extended|stretched|rescheduled|pushed|brought)\b/i;
const FROM_BEFORE_RE = /\bfrom\s+(?:about\s+|around\s+|roughly\s+)?$/i;
const TO_BETWEEN_RE = /^\s*(?:,\s*)?(?:to|up\s+to|down\s+to|till|until)\s+(?:about\s+|around\s+|roughly\s+)?$/i;

/**
 * The candidates without the former state of a spoken change: in "my budget went up from 50 lakhs
 * to 80 lakhs" the value after "from" is what it was, so only 80 lakhs is left. Needs a change verb
 * before the pair: "a budget from 50 to 80 lakhs" is a range and keeps both.
 */
export function withoutChangedFrom(text: string, cands: readonly Candidate[]): Candidate[] {
  const sorted = [...cands].sort((a, b) => a.start - b.start);
  const former = new Set<Candidate>();
  for (let i = 0; i + 1 < sorted.length; i++) {
    const [a, b] = [sorted[i]!, sorted[i + 1]!];
    const before = text.slice(0, a.start);
    if (FROM_BEFORE_RE.test(before) && TO_BETWEEN_RE.test(text.slice(a.end, b.start)) && CHANGE_VERB_RE.test(before)) former.add(a);
  }
  return former.size === 0 ? [...cands] : cands.filter((c) => !former.has(c));
}
