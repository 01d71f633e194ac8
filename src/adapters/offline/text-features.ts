import { stem } from '../../text/stem.ts';
import { canonical } from './synonyms.ts';
import { calendarDates, pad2 } from '../../text/calendar-dates.ts';

/**
 * English function words plus words every memory text carries ("user", "agent", "said"):
 * they would make every pair of facts look alike.
 */
export const EMBED_STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will ' +
    'with would you your yours yourself yourselves ok okay yes yeah um uh hmm please also really actually like just well ' +
    "oh sure right get got going want wants wanted let i'm i've i'd i'll it's that's don't doesn't didn't " +
    'user agent said says say mentioned told tell asked answered'
  ).split(' '),
);

/** One weighted feature of a text: a unigram, a word bigram or a character trigram. */
export interface Feature {
  key: string;
  weight: number;
}

const UNIGRAM = 1;
const NUMBER = 1.5; // amounts and dates tell facts apart ("50 lakhs" vs "80 lakhs"): weigh them up
const BIGRAM = 0.5;
const TRIGRAM = 0.3;
const SURFACE = 0.5;

/** Lower-case word tokens: punctuation dropped, possessives cut, "3BHK" split into "3" and "bhk". */
export function tokenize(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .replace(/'s\b/g, '')
    .replace(/(\d)([a-z])/g, '$1 $2')
    .replace(/([a-z])(\d)/g, '$1 $2')
    .split(/[^a-z0-9']+|'(?![a-z])|(?<![a-z])'/)
    .filter((t) => t !== '' && t !== "'");
}

/**
 * Calendar dates in one canonical form whichever way they are written ("2023-07-06" in an ACU,
 * "July 6, 2023", "6 July 2023", "July 2023" or "in July" in a question): day, month-of-year,
 * month and year features, so a question's date meets the same date in a fact. The matched text
 * is blanked out so its digits do not also count as amounts.
 */
export function dateFeatures(text: string): { rest: string; features: Feature[] } {
  const { dates, rest } = calendarDates(text, true);
  const out: Feature[] = [];
  for (const { year: y, month, day } of dates) {
    const m = pad2(month);
    out.push({ key: `t:m:${m}`, weight: 0.5 });
    if (y) out.push({ key: `u:${y}`, weight: 0.5 }, { key: `t:ym:${y}-${m}`, weight: 0.7 });
    if (day !== undefined) out.push({ key: `t:md:${m}-${pad2(day)}`, weight: 0.5 });
    if (y && day !== undefined) out.push({ key: `t:ymd:${y}-${m}-${pad2(day)}`, weight: 1 });
  }
  return { rest, features: out };
}

/**
 * Features of a text, before hashing: canonical stemmed unigrams, bigrams of neighbouring
 * content words, `#word#` character trigrams so names and misspellings still overlap, and
 * canonical date features.
 */
export function features(text: string): Feature[] {
  const dated = dateFeatures(text);
  const out: Feature[] = [...dated.features];
  const content = tokenize(dated.rest).filter((t) => !EMBED_STOPWORDS.has(t));
  let prev: string | null = null;
  const spelled = new Set<string>();
  for (const tok of content) {
    const isNum = /^\d/.test(tok);
    const s = isNum ? tok.replace(/^0+(?=\d)/, '') : stem(tok.replace(/'/g, ''));
    const c = isNum ? s : canonical(s);
    out.push({ key: `u:${c}`, weight: isNum ? NUMBER : UNIGRAM });
    // A synonym keeps its own word too, at half weight: "metformin" finds "medication" and itself.
    if (c !== s) out.push({ key: `u:${s}`, weight: SURFACE });
    if (prev !== null) out.push({ key: `b:${prev}_${c}`, weight: BIGRAM });
    prev = c;
    // Spelling features once per distinct word: an ACU repeats its subject's name ("Rajiv Kumar
    // (user) said Rajiv Kumar's ..."), and that repetition must not outweigh what the fact is about.
    if (!isNum && tok.length > 2 && !spelled.has(tok)) {
      spelled.add(tok);
      const padded = `#${tok.replace(/'/g, '')}#`;
      for (let i = 0; i + 3 <= padded.length; i++) out.push({ key: `c:${padded.slice(i, i + 3)}`, weight: TRIGRAM });
    }
  }
  return out;
}
