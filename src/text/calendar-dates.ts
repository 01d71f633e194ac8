/**
 * Calendar dates written out in a text ("2023-07-06", "July 6, 2023", "6th of July",
 * "July 2023", "in July"), read to their parts without resolving anything relative:
 * what search needs to make a question's date meet the same date stored in a fact.
 */

/** Parts of one written date; a missing part was not written. */
export interface CalendarDate {
  year?: string;
  month: number;
  day?: number;
}

const MONTHS = 'january february march april may june july august september october november december'.split(' ');
const MONTH = `(${MONTHS.join('|')})`;
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?';
const YEAR = '((?:19|20)\\d\\d)';

const monthOf = (name: string): number => MONTHS.indexOf(name.toLowerCase()) + 1;
const withYear = (y: string | undefined, d: Omit<CalendarDate, 'year'>): CalendarDate => (y === undefined ? d : { ...d, year: y });

type Reader = (m: string[]) => CalendarDate;

// Most specific first; each match is cut out of the text before the next pattern runs.
const WRITTEN: ReadonlyArray<[RegExp, Reader]> = [
  [/\b((?:19|20)\d\d)-(\d{1,2})-(\d{1,2})\b/g, (m) => withYear(m[1], { month: Number(m[2]), day: Number(m[3]) })],
  [new RegExp(`\\b${DAY}\\s+(?:of\\s+)?${MONTH},?\\s+${YEAR}\\b`, 'gi'), (m) => withYear(m[3], { month: monthOf(m[2]!), day: Number(m[1]) })],
  [new RegExp(`\\b${MONTH}\\s+${DAY},?\\s+${YEAR}\\b`, 'gi'), (m) => withYear(m[3], { month: monthOf(m[1]!), day: Number(m[2]) })],
  [new RegExp(`\\b${MONTH},?\\s+${YEAR}\\b`, 'gi'), (m) => withYear(m[2], { month: monthOf(m[1]!) })],
  [new RegExp(`\\b${DAY}\\s+(?:of\\s+)?${MONTH}\\b`, 'gi'), (m) => ({ month: monthOf(m[2]!), day: Number(m[1]) })],
  [new RegExp(`\\b${MONTH}\\s+${DAY}\\b`, 'gi'), (m) => ({ month: monthOf(m[1]!), day: Number(m[2]) })],
];
// A bare month name; "may" and "march" only where they cannot be the verb.
const BARE_MONTH: [RegExp, Reader] = [
  /\b(?:(?<=\b(?:in|of|since|until|till|by|early|late|mid|last|next|this)\s+)(may|march)|(january|february|april|june|july|august|september|october|november|december))\b/gi,
  (m) => ({ month: monthOf((m[1] ?? m[2])!) }),
];

/**
 * The dates written in `text`, and the text with each of them blanked out (so their digits
 * are not read again as amounts). `bareMonths` also takes a month named alone ("in July").
 */
export function calendarDates(text: string, bareMonths = false): { dates: CalendarDate[]; rest: string } {
  const dates: CalendarDate[] = [];
  let rest = text;
  for (const [re, read] of bareMonths ? [...WRITTEN, BARE_MONTH] : WRITTEN) {
    rest = rest.replace(re, (...args: unknown[]) => {
      const m = args.slice(0, -2) as string[];
      const d = read(m);
      if (d.month < 1 || d.month > 12 || (d.day !== undefined && (d.day < 1 || d.day > 31))) return m[0]!;
      dates.push(d);
      return ' ';
    });
  }
  return { dates, rest };
}

export const pad2 = (n: number): string => String(n).padStart(2, '0');
