import { findDates, findTimes } from '../../text/dates.ts';
import { findMoney } from '../../text/money.ts';
import type { StringKind } from './field-cues.ts';

/** A string value captured from a clause, with its span. */
export interface Capture {
  value: string;
  start: number;
  end: number;
}

const NON_NAMES = new Set(
  (
    'i yes no hi hello hey okay ok sure the a an just not calling looking interested good fine great sorry here still also very so really ' +
    'actually thinking planning going trying in at from on happy glad available ready done busy free back home afraid and with ' +
    'monday tuesday wednesday thursday friday saturday sunday january february march april may june july august september ' +
    'october november december today tomorrow yesterday well thanks thank sir madam maam speaking mr mrs ms dr miss' +
    ' calling about regarding for your my our this that it there new old single married retired working same me us everyone everybody nobody all right over out'
  ).split(' '),
);
const HONORIFIC = /^(mr|mrs|ms|miss|dr|prof|shri|smt)\.?$/i;
const STOP_WORDS = new Set(
  (
    'because since as but so which who where when if though although or then is are was were has have had will would can could ' +
    "should cost costs right okay ok please too also actually now ideally probably maybe i'm i we it that this there and " +
    'currently anymore already yet again though with for from till until by per a.m. p.m. to'
  ).split(' '),
);
const LEAD_RE = /^[\s:,-]*(?:(?:is|are|was|were|'s|would be|will be|should be|to be|be|as|of|called|named|it's|its|that's|basically)\s+)*/i;
const DETERMINER_RE = /^(?:a|an|the|some|my|our|his|her|their)\s+/i;
const MAX_WORDS: Record<StringKind, number> = {
  'self-name': 4,
  'person-name': 4,
  email: 1,
  phone: 1,
  address: 10,
  place: 4,
  employer: 5,
  occupation: 5,
  medication: 3,
  dosage: 6,
  text: 8,
};

const isCapitalised = (w: string) => /^[A-Z]/.test(w);
const bare = (w: string) => w.replace(/^["'(]+|[)"',.;:!?]+$/g, '');

/**
 * The phrase right after a cue, up to a clause boundary: "looking in Whitefield because..." →
 * "Whitefield". `proper` demands capitalised words (places, employers, people) so that "in a
 * hurry" is not a location. Addresses may run over commas ("12 MG Road, Indiranagar").
 */
export function captureAfter(text: string, from: number, kind: StringKind, proper: boolean, refTs: number): Capture | null {
  let pos = from + (LEAD_RE.exec(text.slice(from, from + 80))?.[0].length ?? 0);
  const det = DETERMINER_RE.exec(text.slice(pos, pos + 12));
  if (det && kind !== 'self-name') pos += det[0].length;
  // A capture is at most ten words: look no further (and keep long turns linear).
  const rest = text.slice(pos, pos + 240);
  const stops = [...findDates(rest, refTs), ...findTimes(rest), ...findMoney(rest).filter((m) => m.marked)].map((d) => d.start);
  const upper = kind === 'address' ? /^[A-Z0-9]/ : /^[A-Z]/;
  const words: string[] = [];
  let end = pos;
  let first = -1;
  for (const m of rest.matchAll(/\S+/g)) {
    const raw = m[0];
    const w = bare(raw);
    const at = m.index ?? 0;
    if (stops.some((s) => s >= at && s < at + raw.length)) break;
    if (w === '' || STOP_WORDS.has(w.toLowerCase())) {
      // Lower-case connectors inside a proper name: "Bank of Baroda", "Tata Consultancy and Services".
      if (!(proper && /^(of|and|&|de|da)$/i.test(w) && words.length > 0)) break;
    }
    if (proper && !upper.test(w) && !/^(of|and|&|de|da)$/i.test(w)) break;
    if (kind === 'medication' && /^\d/.test(w)) break;
    words.push(w);
    if (first < 0) first = pos + at;
    end = pos + at + raw.replace(/[)"',.;:!?]+$/, '').length;
    const punct = /[,.;:!?]$/.test(raw);
    if (punct && !(kind === 'address' && raw.endsWith(',') && /^\s*[A-Z0-9]/.test(rest.slice(at + raw.length)))) break;
    if (words.length >= MAX_WORDS[kind]) break;
  }
  while (words.length > 0 && /^(of|and|&|de|da|the|a)$/i.test(words.at(-1)!)) {
    words.pop();
    end = pos + rest.slice(0, end - pos).replace(/\s*\S+$/, '').length;
  }
  // The original slice keeps inner punctuation ("12 MG Road, Indiranagar").
  const value =
    first < 0
      ? ''
      : text
          .slice(first, end)
          .replace(/[\s,;:]+$/, '')
          .trim();
  if (!value || NON_NAMES.has(value.toLowerCase()) || (proper && !words.some((w) => upper.test(w) && !NON_NAMES.has(w.toLowerCase())))) return null;
  if (/^\d+(\.\d+)?$/.test(value) && kind !== 'address') return null;
  if (kind === 'place' && !plausiblePlace(words, text.slice(end, end + 40))) return null;
  return { value, start: pos, end };
}

const PLACE_FOLLOWERS =
  /^\s*(?:[,.;:!?)]|$|\d|an?\s+(?:day|week|fortnight|month|year|couple|few)\b|(?:area|side|city|town|district|suburb|region|state|country|road|layout|sector|and|or|but|so|because|since|as|too|also|instead|anyway|please|now|then|yet|though|right|in|on|at|near|with|for|to|from|by|is|are|was|were|has|have|will|would|where|which|who|when|if|maybe|probably|i|we|my|our|last|next|this|yesterday|today|tomorrow|tonight|every|soon|later|already|anymore|(?:mon|tues|wednes|thurs|fri|satur|sun)day|january|february|march|april|may|june|july|august|september|october|november|december)\b)/i;

/**
 * A proper-noun run is a place only if it is not an acronym ("LGBTQ") and is not the modifier of
 * a lower-case noun ("at the Pride fest", "in the Design team").
 */
function plausiblePlace(words: readonly string[], after: string): boolean {
  if (words.some((w) => /^[A-Z+]{4,}$/.test(w))) return false;
  return PLACE_FOLLOWERS.test(after);
}

/**
 * A person's name after a cue: up to four name-like words, honorifics kept for other people
 * ("Dr. Mehta") and dropped for the caller. With `strong` cues ("my name is") lower-case speech
 * is accepted and title-cased; with weak ones ("I'm", "this is") the words must be capitalised,
 * so "I'm looking" is never a name.
 */
export function captureName(text: string, from: number, strong: boolean, self: boolean): Capture | null {
  const pos = from + (LEAD_RE.exec(text.slice(from, from + 80))?.[0].length ?? 0);
  const rest = text.slice(pos, pos + 120);
  const words: string[] = [];
  let end = pos;
  for (const m of rest.matchAll(/\S+/g)) {
    const raw = m[0];
    const w = bare(raw);
    if (HONORIFIC.test(w) && words.length === 0) {
      if (!self) words.push(w.endsWith('.') ? w : `${w}.`);
      continue;
    }
    if (!/^[A-Za-z][A-Za-z'-]*$/.test(w) || NON_NAMES.has(w.toLowerCase()) || STOP_WORDS.has(w.toLowerCase())) break;
    if (!strong && !isCapitalised(w)) break;
    words.push(w);
    end = pos + (m.index ?? 0) + raw.replace(/[)"',.;:!?]+$/, '').length;
    if (/[,.;:!?]$/.test(raw) || words.length >= 4) break;
  }
  const real = words.filter((w) => !HONORIFIC.test(w));
  if (real.length === 0) return null;
  const value = words.map((w) => (w === w.toLowerCase() ? w.charAt(0).toUpperCase() + w.slice(1) : w)).join(' ');
  return { value, start: pos, end };
}

/** "Rajiv here" / "Rajiv Kumar speaking": a caller introducing themselves without a cue before the name. */
export function selfIntroduction(text: string): Capture | null {
  const m = /(?:^|[,.]\s*)(?:hi|hello|hey)?[,\s]*([A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,2})\s+(?:here|speaking)\b/.exec(text);
  if (!m || NON_NAMES.has(m[1]!.split(/\s+/)[0]!.toLowerCase())) return null;
  const start = m.index + m[0].indexOf(m[1]!);
  return { value: m[1]!, start, end: start + m[1]!.length };
}

const EMAIL_RE = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;
const SPOKEN_EMAIL_RE = /\b([a-z0-9]+(?:\s+(?:dot|underscore|dash|hyphen)\s+[a-z0-9]+)*)\s+at\s+([a-z0-9]+(?:\s+dot\s+[a-z]{2,})+)\b/gi;

/** Email addresses, written ("a@b.com") or spoken ("rajiv dot kumar at gmail dot com"). */
export function findEmails(text: string): Capture[] {
  const out: Capture[] = [];
  for (const m of text.matchAll(EMAIL_RE)) out.push({ value: m[0].toLowerCase(), start: m.index ?? 0, end: (m.index ?? 0) + m[0].length });
  for (const m of text.matchAll(SPOKEN_EMAIL_RE)) {
    const spoken = (s: string) =>
      s
        .toLowerCase()
        .replace(/\s+dot\s+/g, '.')
        .replace(/\s+underscore\s+/g, '_')
        .replace(/\s+(?:dash|hyphen)\s+/g, '-');
    out.push({ value: `${spoken(m[1]!)}@${spoken(m[2]!)}`, start: m.index ?? 0, end: (m.index ?? 0) + m[0].length });
  }
  return out;
}

/** Phone numbers: 8 to 15 digits, with optional +, spaces or dashes ("+91 98450 12345"). */
export function findPhones(text: string): Capture[] {
  const out: Capture[] = [];
  for (const m of text.matchAll(/\+?\d[\d\s-]{6,}\d/g)) {
    const digits = m[0].replace(/[^\d+]/g, '');
    const n = digits.replace(/\D/g, '').length;
    if (n >= 8 && n <= 15) out.push({ value: digits, start: m.index ?? 0, end: (m.index ?? 0) + m[0].length });
  }
  return out;
}

const DOSE_RE =
  /\b\d+(?:\.\d+)?\s*(?:mg|mcg|milligrams?|micrograms?|g|grams?|ml|units?|iu|tablets?|pills?|puffs?|drops?|capsules?)\b(?:\s+(?:once|twice|thrice|\d+\s+times)\s+(?:a|per|every)\s+(?:day|week|night|morning)|\s+(?:daily|at night|every \d+ hours|in the morning))?|\b(?:once|twice|thrice|\d+\s+times)\s+(?:a|per)\s+(?:day|week)\b/gi;

/** Doses ("500 mg twice a day", "10 units at night", "twice a day"). */
export function findDosages(text: string): Capture[] {
  return [...text.matchAll(DOSE_RE)].map((m) => ({ value: m[0], start: m.index ?? 0, end: (m.index ?? 0) + m[0].length }));
}

const ANSWER_LEAD_RE =
  /^(?:(?:yes|yeah|yep|yup|no|nope|um|uh|umm|well|so|ok|okay|sure|oh|hi|hello|it's|it is|that's|that is|this is|i'm|i am|my name is|my name's|we're|we are|i live in|we live in|mostly|definitely|probably|maybe|i think|actually|just|basically|i'd say|say)[\s,]+)*/i;

/** The value phrase of a short answer to the agent's question ("Mostly Whitefield, maybe Sarjapur" → "Whitefield"). */
export function answerPhrase(answer: string, kind: StringKind, refTs: number): Capture | null {
  const lead = ANSWER_LEAD_RE.exec(answer)?.[0].length ?? 0;
  if (kind === 'self-name') return captureName(answer, lead, true, true);
  if (kind === 'person-name') return captureName(answer, lead, true, false);
  const proper = kind === 'place' || kind === 'employer';
  return captureAfter(answer, lead, kind, proper, refTs);
}
