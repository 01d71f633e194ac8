/**
 * Spoken numbers → digits. Speech recognisers emit "eighty lakhs", "one and a half crore",
 * "nine eight four five ..." as often as digits, and every value parser downstream
 * (money, numbers, dates, phones) is simpler on digits.
 */

const UNITS: Record<string, number> = {
  zero: 0,
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
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};
const TENS: Record<string, number> = { twenty: 20, thirty: 30, forty: 40, fourty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90 };
const SMALL_SCALES: Record<string, number> = { hundred: 100, thousand: 1000, dozen: 12 };

/** Ordinal words and suffixed ordinals for days of the month ("fifteenth", "twenty-first", "3rd"). */
export const ORDINALS: Readonly<Record<string, number>> = buildOrdinals();

function buildOrdinals(): Record<string, number> {
  const base: Record<string, number> = {
    first: 1,
    second: 2,
    third: 3,
    fourth: 4,
    fifth: 5,
    sixth: 6,
    seventh: 7,
    eighth: 8,
    ninth: 9,
    tenth: 10,
    eleventh: 11,
    twelfth: 12,
    thirteenth: 13,
    fourteenth: 14,
    fifteenth: 15,
    sixteenth: 16,
    seventeenth: 17,
    eighteenth: 18,
    nineteenth: 19,
    twentieth: 20,
    thirtieth: 30,
  };
  const out: Record<string, number> = { ...base };
  for (let d = 1; d <= 9; d++) {
    const w = Object.keys(base).find((k) => base[k] === d) as string;
    out[`twenty-${w}`] = 20 + d;
    out[`twenty ${w}`] = 20 + d;
  }
  out['thirty-first'] = 31;
  out['thirty first'] = 31;
  return out;
}

const WORD = [...Object.keys(UNITS), 'oh', ...Object.keys(TENS), ...Object.keys(SMALL_SCALES), 'point', 'half', 'double', 'triple'].join('|');
// A run of number words joined by spaces, hyphens or "and" ("four hundred and fifty", "one and a half").
const RUN = new RegExp(`\\b(?:a\\s+(?=hundred|thousand|dozen))?(?:${WORD})(?:(?:[\\s-]+|\\s+and\\s+(?:a\\s+)?)(?:${WORD}))*\\b`, 'gi');
const DETERMINERS = /\b(?:the|this|that|which|any|no|some|every|each|another|only)\s+$/i;
const PRONOUN_ONE_BEFORE = /\b(?:the|this|that|which|other|another)\s+(?:[\w'-]+\s+){1,3}$/i;
const PRONOUN_ONE_AFTER = /^\s*(?:[,.;:!?]|$|(?:and|or|but|is|was|for|at|in|on|with|too|instead|please|then|which|that)\b)/i;

/** Numeric value of a run of number words, or null when it is not one well-formed number. */
export function parseNumberWords(run: string): number | null {
  const words = run
    .toLowerCase()
    .replace(/-/g, ' ')
    .split(/\s+/)
    .filter((w) => w !== 'and' && w !== '');
  if (words.length === 0) return null;
  if (words.length >= 3 && words.every((w) => isDigitWord(w))) return null; // a digit string, see digitsOf
  let total = 0;
  let current = 0;
  let seen = false;
  let last: 'unit' | 'teen' | 'tens' | 'scale' | null = null;
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    if (w === 'a') {
      if (i === 0) current = 1; // "a hundred"; elsewhere only in "and a half"
      continue;
    }
    if (w === 'point') {
      const decimals = words.slice(i + 1).map((d) => UNITS[d]);
      if (decimals.length === 0 || decimals.some((d) => d === undefined || d > 9)) return null;
      return total + current + Number(`0.${decimals.join('')}`);
    }
    if (w === 'half') {
      if (!seen) return null;
      return total + current + 0.5;
    }
    const unit = UNITS[w];
    const tens = TENS[w];
    const scale = SMALL_SCALES[w];
    if (unit !== undefined) {
      if (last === 'unit' || last === 'teen') return null;
      current += unit;
      last = unit >= 10 ? 'teen' : 'unit';
    } else if (tens !== undefined) {
      if (last === 'unit' || last === 'teen' || last === 'tens') return null;
      current += tens;
      last = 'tens';
    } else if (scale === 100 || scale === 12) {
      current = (current || 1) * scale;
      last = 'scale';
    } else if (scale === 1000) {
      total += (current || 1) * 1000;
      current = 0;
      last = 'scale';
    } else return null;
    seen = true;
  }
  return seen ? total + current : null;
}

function isDigitWord(w: string): boolean {
  const n = UNITS[w];
  return (n !== undefined && n <= 9) || w === 'oh' || w === 'double' || w === 'triple';
}

/** "nine eight four double five" → "98455": how phone numbers are read out. */
function digitsOf(words: string[]): string | null {
  let out = '';
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    const rep = w === 'double' ? 2 : w === 'triple' ? 3 : 1;
    const word = rep > 1 ? (words[++i] ?? '') : w;
    const d = word === 'oh' ? 0 : UNITS[word];
    if (d === undefined || d > 9) return null;
    out += String(d).repeat(rep);
  }
  return out;
}

/**
 * Replaces spoken numbers by digits ("fifty lakhs" → "50 lakhs", "a lakh" → "1 lakh",
 * "one and a half crore" → "1.5 crore", "half a million" → "0.5 million"). Large Indian and
 * Western scale words (lakh, crore, million, billion) are kept as words: they carry the currency
 * hint money parsing needs. A lone "one" after a determiner ("the one in Whitefield") stays a word.
 */
export function wordsToDigits(text: string): string {
  let out = text.replace(/\bhalf\s+a\s+(lakh|crore|million|billion)/gi, '0.5 $1');
  out = out.replace(/\ba\s+(lakh|crore|million|billion)\b/gi, '1 $1');
  return out.replace(RUN, (run, offset: number, whole: string) => {
    const words = run
      .toLowerCase()
      .replace(/-/g, ' ')
      .split(/\s+/)
      .filter((w) => w !== 'and' && w !== '');
    if (words.length >= 3 && words.every(isDigitWord)) return digitsOf(words) ?? run;
    // "40 thousand", "2.5 thousand": a scale word after digits scales them; the money parser
    // reads it as a word, so it must not become a second number ("40 1000").
    if (SMALL_SCALES[words[0]!] !== undefined && /\d\s*$/.test(whole.slice(0, offset))) return run;
    if (words.length === 1 && (words[0] === 'one' || words[0] === 'half' || words[0] === 'point')) {
      if (words[0] !== 'one' || DETERMINERS.test(whole.slice(0, offset)) || /^\s+of\b/i.test(whole.slice(offset + run.length))) return run;
      // "the Indiranagar one", "the bigger one, please": a pronoun closing a noun phrase, no count.
      if (PRONOUN_ONE_BEFORE.test(whole.slice(0, offset)) && PRONOUN_ONE_AFTER.test(whole.slice(offset + run.length))) return run;
    }
    const n = parseNumberWords(run);
    return n === null ? run : String(n);
  });
}

/** Parses "1,800" / "50,00,000" / "3.5" into a number (commas are digit grouping, Indian or Western). */
export function parseDigits(s: string): number {
  return Number(s.replace(/,/g, ''));
}
