import { findDates, findTimes } from '../../text/dates.ts';
import { findMoney } from '../../text/money.ts';
import { splitSentences } from './clauses.ts';

/** A turn's text with its self-corrections applied, and where corrections are spoken. */
export interface CorrectedText {
  text: string;
  /**
   * Spans of `text` whose values correct what was known: from a correction cue ("actually",
   * "correction", "no, it's") or a corrected value ("sorry, I meant 21 March") to the end of its
   * sentence. A value before the cue in the same sentence is no correction.
   */
  spans: Array<{ start: number; end: number }>;
}

// What a speaker says between a slip and its fix: "X, sorry, I meant Y", "X, no, Y", "X — I mean Y".
// Words that also open ordinary speech ("no", "sorry", "wait") count only after a comma or dash.
const FIX_PHRASE = "(?:i\\s+meant|i\\s+mean|it's|it\\s+is|it\\s+was|that's|that\\s+should\\s+be|make\\s+(?:that|it)|i\\s+said)\\b";
const FIX_MARKER = new RegExp(
  // "12 March, sorry, 21 March", "50 lakhs, no wait, 60": the word needs a comma or a second marker after it ("two kids, no pets" is a list).
  `(?:\\s*(?:,|—|–|\\s-|\\.\\.\\.|…)\\s*(?:oh\\s+)?(?:sorry|no|nope|wait|oops)(?=[,!]|\\s+(?:no|wait|sorry)\\b|\\s+${FIX_PHRASE})[,!]?(?:\\s*(?:no|wait|sorry)\\b[,!]?)?(?:\\s*${FIX_PHRASE})?` +
    // "Pune — I mean Hyderabad", "4pm or rather 5".
    `|\\s*[,—–]?\\s*(?:sorry,?\\s+)?(?:i\\s+meant|i\\s+mean|or\\s+rather|make\\s+(?:that|it)|scratch\\s+that,?(?:\\s+it's)?)\\b)[\\s,:]*`,
  'gi',
);
// "not X but Y": X at most four words, not "not only", "not sure", "not too"...
const NOT_BUT =
  /\bnot\s+(?!(?:only|just|sure|certain|too|very|really|yet|much|so|quite|that|bad|even|at all)\b)((?:[^\s,.;!?]+\s+){0,3}?[^\s,.;!?]+)\s*,?\s+but\s+(?:rather\s+|instead\s+|actually\s+)?(?!(?:i|we|they|he|she|you|i'm|we're)\b)/gi;
// "21 March, not 12 March": a denied value closing the sentence.
const NOT_TAIL = /,?\s+(?:and\s+)?not\s+(?!(?:only|just|sure|yet|really|at all|anymore|any more)\b)((?:[^\s,.;!?]+\s+){0,3}?[^\s,.;!?]+)\s*(?=[.!?]*$)/i;
// "I said X but it's Y": what was said before is withdrawn.
const SAID_BUT = /\bi\s+(?:said|told\s+you|mentioned|gave\s+you)\s+((?:[^\s,.;!?]+\s+){0,7}?[^\s,.;!?]+)\s*,?\s+but\s+(?:it's|it\s+is|it\s+should\s+be|i\s+meant|actually|really|in\s+fact)?\s*/gi;
/** Cue words that mark what follows as a correction of something said before (docs/protocol.md, Memory semantics). */
const CUE =
  /\b(?:actually|correction|to\s+correct|let\s+me\s+correct|i\s+meant|what\s+i\s+meant|i\s+mean|my\s+mistake|i\s+was\s+wrong|i\s+misspoke|i\s+got\s+(?:it|that)\s+wrong|i\s+made\s+a\s+mistake|scratch\s+that|make\s+that|or\s+rather|sorry,?\s+(?:it's|it\s+is|that's|i\s+meant|no)\b|(?:^|[,.]\s*)no,?\s+(?:it's|it\s+is|that's|it\s+should\s+be|it\s+was|wait)\b)/gi;
// Words a slip cannot consist of ("Yes, sorry, ..." withdraws nothing).
const NOT_A_SLIP = /^(?:yes|yeah|yep|no|nope|ok|okay|oh|um|uh|well|so|right|sure|hi|hello|hey|and|but|i|it|that|this)$/i;
// Words that end the phrase before a value: "is", "in", "to", "on" ("I live in | Chennai").
const ANCHOR = /^(?:is|are|was|were|am|be|been|'s|it's|i'm|that's|to|in|at|on|for|from|of|with|as|by|called|named|me|about|around|near|:)$/i;
// What follows the marker is no fix when it stalls, asks or only emphasises ("wait, let me think", "no, really").
const NO_FIX =
  /^(?:let me|hold on|one (?:sec|second|moment|minute)|give me|i'?m not sure|i don'?t know|never ?mind|just a|really|seriously|honestly|it'?s fine|that'?s fine|how|what|where|when|why|which|who|can|could|would|is|are|do|does|did)\b/i;
// A fix that restates its own subject ("I meant I live in Mysore") replaces the whole clause.
const RESTATES = /^(?:i|i'm|i've|we|we're|my|our|the|it's|it\s+is|that's)\b/i;
const RESTATED_VERB = /(?:\b(?:is|are|was|were|am|have|has|had|live|lives|moved|work|works|want|need|take|takes)\b|'s\b|'m\b|'re\b|'ve\b)/i;

/**
 * Applies the self-corrections of one (normalised) turn so that only the corrected value is
 * left to extract ("My date of birth is 12 March 1990, sorry, I meant 21 March 1990" →
 * "My date of birth is 21 March 1990"), and marks where correction cues apply. Rules are about
 * the grammar of a repair (slip, marker, fix), never about particular fields or words of a schema.
 */
export function applySelfCorrections(text: string): CorrectedText {
  const sentences: string[] = [];
  const spans: CorrectedText['spans'] = [];
  let offset = 0;
  for (const original of splitSentences(text)) {
    const { sentence, fixes } = repairSentence(original);
    const marks = [...fixes];
    for (const m of sentence.matchAll(CUE)) marks.push(m.index ?? 0);
    if (marks.length > 0) spans.push({ start: offset + Math.min(...marks), end: offset + sentence.length });
    sentences.push(sentence);
    offset += sentence.length + 1;
  }
  return { text: sentences.join(' '), spans };
}

/** One sentence with its repairs applied (at most a few per sentence), and where each fix starts. */
function repairSentence(input: string): { sentence: string; fixes: number[] } {
  let s = input;
  const fixes: number[] = [];
  for (let round = 0; round < 4; round++) {
    const r = notBut(s) ?? saidBut(s) ?? markerRepair(s) ?? notTail(s);
    if (!r) break;
    const removed = s.length - r.text.length;
    // Earlier fixes keep their place: what was cut lies after them or is the slip they fixed.
    for (let i = 0; i < fixes.length; i++) if (fixes[i]! > r.fixAt) fixes[i] = Math.max(r.fixAt, fixes[i]! - removed);
    s = r.text;
    fixes.push(r.fixAt);
  }
  return { sentence: s, fixes };
}

/** A sentence after one repair, and where its fix (the corrected value) starts. */
interface Repair {
  text: string;
  fixAt: number;
}

/** `s` without [cut, resume): the slip and the marker go, the fix moves to `cut`. */
const splice = (s: string, cut: number, resume: number): Repair => ({ text: s.slice(0, cut) + s.slice(resume), fixAt: cut });

function notBut(s: string): Repair | null {
  NOT_BUT.lastIndex = 0;
  const m = NOT_BUT.exec(s);
  return m ? splice(s, m.index, m.index + m[0].length) : null;
}

/** "It's 21 March, not 12 March": drop the denied tail; the clause before it is the fix. */
function notTail(s: string): Repair | null {
  const m = NOT_TAIL.exec(s);
  // Only a denied value (a number or a name), not "a flat, not a villa".
  if (!m || !/\d|\b[A-Z]/.test(m[1]!) || m.index === 0) return null;
  return { text: s.slice(0, m.index) + s.slice(m.index + m[0].length), fixAt: clauseStart(s, m.index) };
}

function saidBut(s: string): Repair | null {
  SAID_BUT.lastIndex = 0;
  const m = SAID_BUT.exec(s);
  if (!m) return null;
  const resume = m.index + m[0].length;
  const said = m[1]!;
  const saidAt = m.index + m[0].indexOf(said);
  // Keep what frames the value: "I said my budget was 50 but it's 60" → "my budget was 60".
  const slip = slipStart(s.slice(0, saidAt + said.length));
  if (slip === null || slip <= saidAt) return splice(s, m.index, resume);
  const frame = s.slice(saidAt, slip);
  return { text: s.slice(0, m.index) + frame + s.slice(resume), fixAt: m.index + frame.length };
}

function markerRepair(s: string): Repair | null {
  FIX_MARKER.lastIndex = 0;
  for (let m = FIX_MARKER.exec(s); m; m = FIX_MARKER.exec(s)) {
    const resume = m.index + m[0].length;
    if (resume >= s.replace(/[.!?\s]+$/, '').length || NO_FIX.test(s.slice(resume))) continue; // no fix after the marker
    const slip = slipStart(s.slice(0, m.index));
    if (slip === null) continue;
    const fix = s.slice(resume);
    if (RESTATES.test(fix) && RESTATED_VERB.test(fix)) return splice(s, clauseStart(s, slip), resume);
    // A fix has the shape of its slip; "Whitefield, I mean the area near ITPL" explains, it does not repair.
    if (shape(s.slice(slip)) !== shape(fix)) continue;
    return splice(s, slip, resume);
  }
  return null;
}

/**
 * Where the slip ends `before` starts: a money amount, date, time or number ending there, else
 * up to four words back to an anchor ("is", "in", "to"...). Null when there is no slip.
 */
function slipStart(before: string): number | null {
  const end = before.replace(/[\s,;:]+$/, '').length;
  if (end === 0) return null;
  const head = before.slice(0, end);
  // A date's own preposition stays: "call me on Tuesday, no, Wednesday" → "on Wednesday".
  const dates = findDates(head, 0).map((d) => ({ end: d.end, start: d.prep ? d.start + d.text.toLowerCase().indexOf(d.prep) + d.prep.length + 1 : d.start }));
  const typed = [...findMoney(head), ...dates, ...findTimes(head)].filter((v) => v.end >= end - 1).map((v) => v.start);
  // A number with its unit ("500 mg", "3 BHK") or a phone number.
  const number = /(?:\+?\d[\d\s,.-]*\d|\d)(?:\s*[A-Za-z%]{1,8})?$/.exec(head);
  if (number) typed.push(number.index);
  if (typed.length > 0) return Math.min(...typed);
  // Else the words back to an anchor ("I live in | Chennai"), at most four; without an anchor
  // only a short slip that opens the sentence ("Tuesday, no, Wednesday").
  const words = [...head.matchAll(/\S+/g)];
  let start: number | null = null;
  let anchored = false;
  for (let i = words.length - 1, n = 0; i >= 0 && n < 4; i--, n++) {
    const w = words[i]![0].replace(/[^\w':]+$/g, '').replace(/^[^\w':]+/g, '');
    if (ANCHOR.test(w) || (/[,.;!?]$/.test(words[i]![0]) && i < words.length - 1)) {
      anchored = true;
      break;
    }
    start = words[i]!.index ?? 0;
  }
  if (start === null || (!anchored && (start > 0 || words.length > 2))) return null;
  const slip = head.slice(start).trim();
  return slip.split(/\s+/).every((w) => NOT_A_SLIP.test(w.replace(/[^\w']/g, ''))) ? null : start;
}

/** Rough shape of a value phrase: a number (or amount), a capitalised name, or lower-case words. */
function shape(phrase: string): 'number' | 'name' | 'word' {
  const first = phrase
    .trim()
    .replace(/^(?:a|an|the|rs\.?|inr|usd|us\$)\s*/i, '')
    .charAt(0);
  return /[\d₹$€£]/.test(first) ? 'number' : /[A-Z]/.test(first) ? 'name' : 'word';
}

/** Start of the clause holding position `at`: after the last ", ", "; ", " and ", " but " before it. */
function clauseStart(s: string, at: number): number {
  let start = 0;
  for (const m of s.slice(0, at).matchAll(/(?:[,;]\s+|\s+(?:and|but|so)\s+)/gi)) start = (m.index ?? 0) + m[0].length;
  return start;
}
