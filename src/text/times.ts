/**
 * Clock times in conversational English ("at 4pm", "11:30", "at five in the evening", "noon").
 * Wall-clock only: no time zone is attached (see dates.ts).
 */

/** Hours and minutes, 24-hour clock. */
export interface TimeOfDay {
  h: number;
  m: number;
}

/** One clock time found in a text. */
export interface TimeMatch {
  start: number;
  end: number;
  time: TimeOfDay;
}

const HOUR_WORDS: Record<string, number> = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12 };
const MINUTE_WORDS: Record<string, number> = { fifteen: 15, thirty: 30, 'forty five': 45, 'forty-five': 45, "o'clock": 0, oclock: 0 };
const MERIDIEM = "(a\\.?m\\.?(?![a-z])|p\\.?m\\.?(?![a-z])|o'?clock|in\\s+the\\s+morning|in\\s+the\\s+afternoon|in\\s+the\\s+evening|at\\s+night|tonight)";
const HOUR_WORD_RE = `(${Object.keys(HOUR_WORDS).join('|')})`;

const RULES: Array<[RegExp, (m: RegExpExecArray) => TimeOfDay | null]> = [
  [new RegExp(`\\b(\\d{1,2}):(\\d{2})(?:\\s*${MERIDIEM})?`, 'gi'), (m) => clock(+m[1]!, +m[2]!, m[3], true)],
  [new RegExp(`\\b(\\d{1,2})\\.(\\d{2})\\s*(a\\.?m\\.?|p\\.?m\\.?)`, 'gi'), (m) => clock(+m[1]!, +m[2]!, m[3], true)],
  [new RegExp(`\\b(\\d{1,2})\\s*${MERIDIEM}`, 'gi'), (m) => clock(+m[1]!, 0, m[2], true)],
  [
    new RegExp(`\\b(?:at|around|by|about)\\s+${HOUR_WORD_RE}(?:\\s+(fifteen|thirty|forty[- ]five|o'?clock))?(?:\\s*${MERIDIEM})?(?![\\w-])`, 'gi'),
    (m) => clock(HOUR_WORDS[m[1]!.toLowerCase()]!, MINUTE_WORDS[(m[2] ?? "o'clock").toLowerCase().replace('oclock', "o'clock")] ?? 0, m[3], false),
  ],
  // "at 11": a bare hour needs "at"/"around" and must not start an address ("at 5 Park Street") or an amount.
  [
    /\b(?:at|around|by)\s+(\d{1,2})(?![\d:]|[.,]\d|\s*(?:%|percent|lakhs?|crores?|k\b|[ap]\.?m))(?:\s+(in\s+the\s+morning|in\s+the\s+afternoon|in\s+the\s+evening|at\s+night))?/gi,
    (m) => (/^\s+[A-Z]/.test(m.input.slice(m.index + m[0].length)) ? null : clock(+m[1]!, 0, m[2], false)),
  ],
  [/\b(noon|midday|midnight)\b/gi, (m) => ({ h: m[1]!.toLowerCase() === 'midnight' ? 0 : 12, m: 0 })],
  [new RegExp(`\\bhalf\\s+past\\s+(\\d{1,2}|${HOUR_WORD_RE.slice(1, -1)})(?:\\s*${MERIDIEM})?`, 'gi'), (m) => clock(HOUR_WORDS[m[1]!.toLowerCase()] ?? +m[1]!, 30, m[2], false)],
];

/**
 * 24-hour time from an hour, minutes and an optional am/pm phrase. Without one, an hour from 1
 * to 7 is read as afternoon (appointments are rarely at 4 a.m.); hours above 12 are accepted
 * only in digit forms (`twentyFour`: "16:00").
 */
function clock(h: number, m: number, meridiem: string | undefined, twentyFour: boolean): TimeOfDay | null {
  if (m > 59 || h > 23 || (!twentyFour && (h < 1 || h > 12))) return null;
  const mer = (meridiem ?? '').toLowerCase().replace(/[.\s]/g, '');
  if (/^(pm|intheafternoon|intheevening|atnight|tonight)$/.test(mer)) {
    if (h > 12) return null;
    return { h: h === 12 ? 12 : h + 12, m };
  }
  if (/^(am|inthemorning)$/.test(mer)) {
    if (h > 12) return null;
    return { h: h === 12 ? 0 : h, m };
  }
  return h > 12 || h === 0 ? { h, m } : { h: h <= 7 ? h + 12 : h, m };
}

/** Every clock time in `text`, in order; overlapping matches keep the longest. */
export function findTimes(text: string): TimeMatch[] {
  const cands: TimeMatch[] = [];
  for (const [re, fn] of RULES) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const time = fn(m);
      if (time) cands.push({ start: m.index, end: m.index + m[0].length, time });
    }
  }
  cands.sort((a, b) => b.end - b.start - (a.end - a.start) || a.start - b.start);
  const taken: TimeMatch[] = [];
  for (const c of cands) if (!taken.some((t) => c.start < t.end && t.start < c.end)) taken.push(c);
  return taken.sort((a, b) => a.start - b.start);
}
