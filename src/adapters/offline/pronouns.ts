/**
 * First- and second-person pronouns → names, with the verb agreement that follows
 * ("I am" → "Rajiv Kumar is", "you want" → "Rajiv Kumar wants"), so an ACU reads as a
 * standalone third-person fact.
 */

/** Who "I" and "you" are in a turn. `speaker`/`listener` are display names or "the user"/"the agent". */
export interface Voices {
  speaker: string;
  listener: string;
  /** "we" of the caller is their household; "we" of the agent is the agent's organisation. */
  speakerGroup: string;
  /**
   * What "I" and "my" become when the sentence already names its speaker ("my name is Rajiv
   * Kumar", "I'm Rajiv"): the role ("the user"), so the rewrite does not state the name of
   * itself ("Rajiv Kumar's name is Rajiv Kumar"). Without it the name is used.
   */
  self?: string;
}

const MODALS = new Set('can could will would should shall might must may need ought'.split(' '));
const ADVERBS = new Set('also really just still only already actually never always usually definitely currently recently even mostly probably certainly genuinely honestly'.split(' '));
const IRREGULAR_PAST = new Set(
  (
    'got went had was were did made said took paid bought sold saw met found left told thought felt came gave knew put ran sent spent began ' +
    'became kept lost heard held brought chose wrote fell set let cut quit hurt read sat stood understood forgot won ate drove flew grew threw ' +
    'spoke broke woke wore meant built caught fought taught sought dealt slept'
  ).split(' '),
);
const NOT_VERBS = new Set(
  (
    'a an the to in on at for of with from by about as and or but so if that this these those there here back too not no yes ' +
    'please again now then today tomorrow yesterday very much more less all both each every some any one two three it its'
  ).split(' '),
);

/** Third-person singular of a base-form verb ("want" → "wants", "try" → "tries", "go" → "goes"). */
export function thirdPerson(verb: string): string {
  const v = verb.toLowerCase();
  if (v === 'am' || v === 'are') return 'is';
  if (v === 'have') return 'has';
  if (v === 'do') return 'does';
  if (v === 'were') return 'was';
  if (v === "don't" || v === 'dont') return "doesn't";
  if (v === "aren't") return "isn't";
  if (v === "haven't") return "hasn't";
  if (v === "weren't") return "wasn't";
  if (MODALS.has(v) || IRREGULAR_PAST.has(v) || v.endsWith('ed') || v.endsWith("n't") || NOT_VERBS.has(v) || !/^[a-z]+$/.test(v)) return verb;
  if (/(s|sh|ch|x|z|o)$/.test(v)) return `${verb}es`;
  if (/[^aeiou]y$/.test(v)) return `${verb.slice(0, -1)}ies`;
  return `${verb}s`;
}

const PRONOUN_RE = /\b(i'm|i've|i'd|i'll|i|me|my|mine|myself|let's|we're|we've|we'd|we'll|we|us|our|ours|ourselves|you're|you've|you'd|you'll|you|your|yours|yourself)\b/gi;
const CONTRACTION: Record<string, string> = { "'m": 'is', "'re": 'are', "'ve": 'has', "'d": 'would', "'ll": 'will' };

/**
 * Rewrites every first- and second-person pronoun in `text` into names. A subject "I"/"you"
 * takes a third-person verb (the first word after optional adverbs); "we" becomes
 * "<speaker group>", which keeps plural agreement ("we are" → "Rajiv Kumar and family are").
 */
export function rewritePronouns(text: string, v: Voices): string {
  const src = text.replace(/[’‘]/g, "'");
  const me = v.self !== undefined && namesSpeaker(src, v.speaker) ? v.self : v.speaker;
  let out = '';
  let at = 0;
  PRONOUN_RE.lastIndex = 0;
  for (let m = PRONOUN_RE.exec(src); m; m = PRONOUN_RE.exec(src)) {
    const word = m[0];
    const lower = word.toLowerCase();
    if (word === 'US') continue; // the country
    out += src.slice(at, m.index);
    at = m.index + word.length;
    const atStart = /(^|[.!?]\s*|["“]\s*)$/.test(out);
    let rep: string;
    let conjugate = false;
    if (lower === 'i' || lower === 'you') {
      rep = lower === 'i' ? me : v.listener;
      // "you" after a verb or preposition is an object ("call you back"): no agreement.
      conjugate = /(^|[,.;:!?"]\s*|\b(?:and|but|so|that|if|when|because|since|as|or|then|where|while|said|think|hope)\s+)$/i.test(out);
    } else if (lower === 'me' || lower === 'myself') rep = me;
    else if (lower === 'yourself') rep = v.listener;
    else if (lower === 'my' || lower === 'mine') rep = `${me}'s`;
    else if (lower === 'your' || lower === 'yours') rep = `${v.listener}'s`;
    else if (lower === 'our' || lower === 'ours') rep = `${v.speakerGroup}'s`;
    else if (lower === 'we' || lower === 'us' || lower === 'ourselves') rep = v.speakerGroup;
    else if (lower === "let's") rep = `${me} proposed to`;
    else {
      const [who, tail] = lower.split("'") as [string, string];
      const subject = who === 'i' ? me : who === 'you' ? v.listener : v.speakerGroup;
      const plural = who === 'we';
      const verb = CONTRACTION[`'${tail}`] ?? '';
      const agreed = plural ? (verb === 'has' ? 'have' : verb) : verb === 'are' ? 'is' : verb;
      rep = `${subject} ${agreed}`;
    }
    if (atStart) rep = rep.charAt(0).toUpperCase() + rep.slice(1);
    else if (/^(The|A) /.test(rep)) rep = rep.charAt(0).toLowerCase() + rep.slice(1);
    out += rep;
    if (conjugate) {
      // Skip adverbs ("I also want"), then put the verb in the third person.
      const re = /^\s+([a-z']+)/i;
      let skip = 0;
      for (let w = re.exec(src.slice(at)); w; w = re.exec(src.slice(at + skip))) {
        if (ADVERBS.has(w[1]!.toLowerCase())) {
          skip += w[0].length;
          continue;
        }
        out += src.slice(at, at + skip) + w[0].slice(0, w[0].length - w[1]!.length) + thirdPerson(w[1]!);
        at += skip + w[0].length;
        break;
      }
    }
  }
  out += src.slice(at);
  // Questions invert subject and auxiliary: "do you have" → "does Rajiv Kumar have".
  for (const name of new Set([me, v.listener])) {
    const esc = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    // Only in question position (sentence start or after a wh-word) and not before a possessive:
    // "to have Rajiv Kumar's number" keeps its "have".
    // The wh-word may lead a short noun phrase: "what kind of home are you looking for".
    const inverted = new RegExp(`(^|[.!?"]\\s*|\\b(?:what|when|where|why|how|which|who|whom)(?:\\s+[a-z]+){0,3}?\\s+)(do|are|have|were|am|don't|aren't|haven't)(\\s+${esc})(?!'s)\\b`, 'gi');
    out = out.replace(inverted, (_m, lead: string, aux: string, rest: string) => {
      const third = thirdPerson(aux.toLowerCase());
      return lead + (aux[0] === aux[0]!.toUpperCase() ? third.charAt(0).toUpperCase() + third.slice(1) : third) + rest;
    });
  }
  return out;
}

/** Does the sentence say any part of the speaker's name ("Rajiv" of "Rajiv Kumar")? */
function namesSpeaker(text: string, speaker: string): boolean {
  return speaker
    .split(/\s+/)
    .filter((part) => part.length > 1)
    .some((part) => new RegExp(`\\b${part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`).test(text));
}
