import type { Turn } from '../../core/types.ts';
import { looksPast } from '../../text/dates.ts';
import { STOPWORDS } from '../../core/stopwords.ts';
import { wordsToDigits } from '../../text/numbers.ts';

/** A sentence or sub-sentence of a turn, with the cheap signals the extractor's rules need. */
export interface Clause {
  text: string;
  /** Where the clause starts in the turn's text. */
  offset: number;
  /** The whole sentence the clause belongs to, and its index in the turn. */
  sentence: string;
  sentenceIndex: number;
  /**
   * Where the first hedge ("maybe", "probably", "thinking about") starts in `text`, 0 when the
   * sentence opens with one, -1 when none: it hedges what follows it ("Whitefield or maybe
   * Sarjapur" commits to Whitefield).
   */
  hedgeAt: number;
  question: boolean;
  /** Speaks about the speaker ("I", "my", "we"); for agent turns, about the caller ("you", "your"). */
  personal: boolean;
  past: boolean;
  /** Describes a former state ("my budget was 50 lakhs", "I used to smoke"): loses to a present one. */
  former: boolean;
}

/** Speech text made uniform for the rules: straight apostrophes, single spaces, digits for spoken numbers. */
export function normalizeSpeech(text: string): string {
  return wordsToDigits(text.replace(/[’‘]/g, "'").replace(/[“”]/g, '"').replace(/\s+/g, ' ').trim());
}

const HEDGE_RE =
  /\b(maybe|probably|perhaps|possibly|might|may be|thinking (?:about|of)|considering|not sure|i guess|i think|i suppose|i believe|likely|hopefully|could be|kind of|sort of|tentative(?:ly)?|hoping|depends|if possible|not decided)\b/i;
const FORMER_RE = /\b(was|were|used to|previously|earlier|originally|had been|at first|initially|before that)\b/i;
const USER_PERSONAL_RE = /\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'd|we'll|our|ours|us)\b/i;
const AGENT_PERSONAL_RE = /\b(you|you're|you've|you'd|you'll|your|yours|yourself)\b/i;
const QUESTION_START_RE =
  /^(?:so\s+|and\s+|okay\s+|ok\s+|great\s+|also\s+)?(what|what's|when|where|which|who|whom|whose|why|how|do|does|did|are|is|was|were|have|has|had|can|could|would|will|shall|should|may|any)\b/i;
// Abbreviations whose full stop does not end a sentence.
const ABBREV_RE = /\b(?:dr|mr|mrs|ms|st|rs|no|approx|vs|e\.g|i\.e|sr|jr)\.$/i;

/** Sentences of a text: split after . ! ? unless the dot ends an abbreviation ("Dr. Mehta", "Rs. 500"). */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  const re = /[.!?]+(?=\s|$)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const end = m.index + m[0].length;
    if (m[0] === '.' && ABBREV_RE.test(text.slice(Math.max(0, end - 6), end))) continue;
    const s = text.slice(start, end).trim();
    if (s) out.push(s);
    start = end;
  }
  const rest = text.slice(start).trim();
  if (rest) out.push(rest);
  return out;
}

/**
 * Clauses of a (normalised) turn: sentences, split again at "but", ";" and ", and I/we" so that
 * "my budget was 50 lakhs but now it's 80" yields a past and a present clause. Splitting stays
 * conservative because a cue and its value must stay in one clause.
 */
export function splitClauses(text: string, perspective: 'user' | 'agent' = 'user'): Clause[] {
  const out: Clause[] = [];
  let at = 0;
  for (const [sentenceIndex, sentence] of splitSentences(text).entries()) {
    const question = /\?\s*$/.test(sentence) || QUESTION_START_RE.test(sentence);
    for (const part of sentence.split(/\s+but\s+|;\s+|,\s+(?:and|so)\s+(?=(?:i|i'm|we|we're|my|our|now)\b)/i)) {
      const t = part.trim();
      if (!t) continue;
      const offset = Math.max(0, text.indexOf(t, at));
      at = offset + t.length;
      out.push({
        text: t,
        offset,
        sentence,
        sentenceIndex,
        hedgeAt: HEDGE_RE.test(sentence.slice(0, 12)) ? 0 : (HEDGE_RE.exec(t)?.index ?? -1),
        question,
        personal: (perspective === 'user' ? USER_PERSONAL_RE : AGENT_PERSONAL_RE).test(t),
        past: looksPast(t),
        former: FORMER_RE.test(t),
      });
    }
  }
  return out;
}

/**
 * Did `b` directly follow `a` in the conversation? Same session and no dialogue turn between
 * them (`all` is the input including system/tool turns). The buffer can hold a kept question
 * whose answer was already archived: it must not pair with an unrelated later "yes".
 */
export function adjacent(a: Turn, b: Turn, all: readonly Turn[]): boolean {
  if (a.sessionId !== b.sessionId || b.seq <= a.seq) return false;
  if (b.seq === a.seq + 1) return true;
  const between = all.filter((t) => t.seq > a.seq && t.seq < b.seq);
  return between.length === b.seq - a.seq - 1 && between.every((t) => t.role === 'system' || t.role === 'tool');
}

/** True when a sentence asks something (ends with "?" or opens like a question). */
export function isQuestion(sentence: string): boolean {
  return /\?\s*$/.test(sentence) || QUESTION_START_RE.test(sentence.trim());
}

const CONFIRM_RE =
  /^(?:(?:oh|uh|um|well|ok|okay|yeah)[,\s]+)?(yes|yeah|yep|yup|ya|yes please|correct|that's (?:right|correct|it|fine|perfect)|that is (?:right|correct)|exactly|right|absolutely|definitely|sure|of course|perfect|sounds (?:good|great|perfect)|that works|works for me|\w+ works|please do|go ahead|confirmed|fine|great,? (?:yes|thanks|do it)|book it|do it)\b/i;
const CORRECTION_RE = /^\W*(?:no|nope|nah|not|actually no|wait)\b/i;

/** Does this user turn accept what the agent just said or proposed ("yes", "that's right", "Saturday works")? */
export function isConfirmation(userText: string): boolean {
  const t = userText.replace(/[’‘]/g, "'").trim();
  return !CORRECTION_RE.test(t) && CONFIRM_RE.test(t);
}

const FILLER_WORDS = new Set(
  (
    'ok okay k alright all right fine thanks thank you very much so hello hi hey there mm hmm mmhmm mm-hmm uh-huh uh huh um ' +
    'er ah oh bye goodbye good morning afternoon evening night see ya take care have a nice day great cool got it sure yeah ' +
    'yes yep no nope right one moment second minute hold on please wait sorry pardon come again i see understood noted ' +
    "perfect awesome wonderful lovely nice talk soon later then well anyway to you too meet congratulations congrats welcome again glad hear that correct exactly absolutely definitely indeed that's it's it is"
  ).split(' '),
);

const FILLER_EXTRA = new Set(('wow whoa woah haha hahaha lol aw aww yay omg gosh cheers totally agree agreed sounds really so amazing fantastic ' + 'incredible brilliant sweet').split(' '));
// Set phrases of small talk, removed before the word test ("long time no see", "way to go").
const FILLER_PHRASE_RE =
  /\b(?:long time no (?:see|talk|chat|speak)|way to go|good luck|for sure|stay safe|take it easy|no (?:problem|worries)|my pleasure|you're welcome|what's up|how are you|good to (?:see|hear from) you|thanks? (?:a lot|so much|for (?:sharing|asking|the support|letting me know))|sounds like a plan)\b/gi;
// A name addressed to the listener ("Wow, John!", "Thanks Mel"): a capitalised word after a comma or a filler word.
// The name must be capitalised (case-sensitive), the word before it in either case.
const VOCATIVE_LEADS = 'hi hey hello thanks thank you wow congrats congratulations bye cheers sure okay ok great awesome cool'.split(' ').map((w) => `[${w[0]}${w[0]!.toUpperCase()}]${w.slice(1)}`);
const VOCATIVE_RE = new RegExp(`(^|,\\s*|\\b(?:${VOCATIVE_LEADS.join('|')})\\s+)[A-Z][a-z]+(?=\\s*[,.!?]|\\s*$)`, 'g');

/** A turn or sentence with nothing to remember ("okay", "thanks", "mm-hmm", "bye", "Wow, John!"). */
export function isFiller(text: string): boolean {
  let cleaned = text.replace(/[’‘]/g, "'").replace(FILLER_PHRASE_RE, ' , ');
  // "Yes, Whitefield." answers something: the place is no vocative.
  if (!/^\W*(?:yes|yeah|yep|no|nope|nah)\b/i.test(cleaned)) cleaned = cleaned.replace(VOCATIVE_RE, (m, lead: string) => (lead.length === 0 ? m : lead));
  const words = cleaned
    .toLowerCase()
    .replace(/[^a-z'\- ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
  return words.every((w) => FILLER_WORDS.has(w) || FILLER_EXTRA.has(w) || FILLER_WORDS.has(w.replace(/-/g, '')));
}

// Openers of a reaction to what the listener just shared ("Glad you found it", "Wow, love that
// painting", "Sounds like a great trip", "Sorry about the hike", "Wow Joanna, nice work"),
// optionally after an interjection and a name.
const REACTION_OPENER_RE =
  /^(?:(?:wow|oh|ooh|aw+|ah|omg|yay|haha|hey|yes|yeah|so)\b[\s,!.]*)*(?:[A-Z][a-z]+[\s,!.]+)?(?:(?:i'm |i am |i'm so |so |really )?glad\b|(?:i'm |so )?sorry (?:about|to hear|for)\b|(?:that |it )?sounds? (?:like|great|awesome|amazing|fun|lovely|wonderful|cool|incredible|fantastic|nice|really)\b|that'?s (?:so |really |such )?(?:a |an )?(?:great|awesome|amazing|cool|wonderful|lovely|beautiful|impressive|sweet|fantastic|incredible|nice|good|huge|big|tough|hard|rough)\b|what an? \b|(?:(?:so |really )?(?:nice|great|good|amazing|awesome|fantastic|excellent) (?:job|work)|well done)\b|(?:i )?love (?:that|this|your|the)\b|(?:i )?(?:really )?appreciate\b|thanks?\b|thank you\b|congrat|(?:i'm |i am )?(?:so )?proud of you\b|good for you\b|(?:i'm |i am )?(?:so )?happy for you\b|your \w+ (?:is|are|was|were|looks?|sounds?) (?:so |really )?(?:great|awesome|amazing|cool|wonderful|lovely|beautiful|gorgeous|stunning|impressive|incredible)\b)/i;
// The speaker's own news: a reaction that also tells it ("Glad you liked it, I painted it last week") stays.
const OWN_NEWS_RE = /\b(?:i|i've|i'd|i'll|my|we|we've|our|us|me)\b/i;

/**
 * A sentence that only reacts to what the listener shared: the news is in the listener's own
 * turn, and the reaction ("Wow, love that painting!") would otherwise become a memory of its own
 * that outranks it in search. Not a reaction when it tells the speaker's own news.
 */
export function isReaction(text: string): boolean {
  const t = text.replace(/[’‘]/g, "'").trim();
  const m = REACTION_OPENER_RE.exec(t);
  if (!m) return false;
  const rest = t.slice(m[0].length);
  return !OWN_NEWS_RE.test(rest.replace(/\b(?:for|to|with) me\b/gi, ' '));
}

/**
 * Words of a sentence that carry content: not function words, not small talk ("awesome",
 * "thanks", "wow"), longer than two letters. "It was awesome, Mel" has none; "the pottery class
 * was awesome" has two.
 */
export function contentWords(text: string): number {
  let n = 0;
  for (const w of text
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .split(/[^a-z0-9']+/)) {
    const word = w.replace(/^'+|'+$/g, '').replace(/'s$/, '');
    if (word.length > 2 && !STOPWORDS.has(word) && !FILLER_WORDS.has(word) && !FILLER_EXTRA.has(word)) n++;
  }
  return n;
}
