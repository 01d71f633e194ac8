/**
 * Lead-ins: what opens a spoken sentence without stating anything ("Good news though, the bank
 * approved my loan", "Wonderful, with 80 lakhs we can ...", "Noted: 50 lakhs"). Quoted into a
 * memory line they read as someone else's speech ("said Wonderful, ..."), so the compressor drops
 * them and the block checker flags them. Found by sentence structure: a short opening segment cut
 * off by a comma, colon, dash or "!" that is a discourse marker (a closed class, below) or that
 * the caller judges empty (the compressor's filler test), before a rest that still says something.
 * Hedges ("maybe", "probably") and corrections ("actually", "no") are never lead-ins: they change
 * what the rest means.
 */

// Discourse markers: announce, resume or frame what follows. "Good news" is the announcement
// itself, the news is the rest; "though", "then" and "too" only tie it to the talk before.
const MARKER = String.raw`(?:(?:good|great|bad|big|some) news|the (?:good|bad) news is|by the way|anyway|anyways|well|so|oh|ah|okay|ok|alright|all right|now|listen|look|you know|honestly|to be honest|frankly|guess what|in fact|as it turns out|as it happens|funnily enough|funny enough)`;
const MARKER_RE = new RegExp(`^${MARKER}(?:\\s+(?:though|then|too))?$`, 'i');

// A segment: up to five words before a comma, colon, dash or "!" ("Good news though, ", "Noted: ").
const SEGMENT_RE = /^([^,:;!?.—–"]{1,40}?)\s*(?:[,:!—–]|\s-\s)\s*/;
// What is left must still be a statement of a few words, or the "lead-in" was the whole answer.
const MIN_REST_WORDS = 3;

/** The sentence without its lead-ins; `empty` says whether a segment states nothing (fillers, acknowledgements). */
export function dropLeadIns(sentence: string, empty: (segment: string) => boolean = () => false): string {
  let s = sentence;
  for (let m = SEGMENT_RE.exec(s); m; m = SEGMENT_RE.exec(s)) {
    const segment = m[1]!.trim();
    const rest = s.slice(m[0].length);
    if (segment.split(/\s+/).length > 5 || rest.split(/\s+/).filter(Boolean).length < MIN_REST_WORDS) break;
    if (!MARKER_RE.test(segment) && !empty(segment)) break;
    s = rest;
  }
  return s;
}

// Acknowledgements the checker knows by name (the compressor asks its filler test instead).
const ACK_WORD = String.raw`(?:wow|lovely|wonderful|great|perfect|noted|sure|thanks|thank you|got it|understood|awesome|cool|nice|excellent|fantastic)`;
// Where a sentence of a memory line starts: after the entry's "- label: ", after a full stop, or after "said".
const STARTS = String.raw`(?:^-\s+[^:]{1,40}:\s+|[.!?]\s+|\bsaid\s+)`;

/**
 * Does a memory line quote a lead-in: a sentence (or what someone "said") opening with a discourse
 * marker or an acknowledgement before a comma or colon ("Good news though, the bank ...", "said
 * Wonderful, with ...", "said Noted: ...")? For the block checker; verbatim turns are speech and exempt.
 */
export function hasLeadIn(line: string): boolean {
  return LEAD_IN_LINE_RE.test(line) || SAID_COLON_RE.test(line);
}
const LEAD_IN_LINE_RE = new RegExp(`${STARTS}(?:${MARKER}|${ACK_WORD})(?:\\s+(?:though|then|too))?(?:\\s+\\p{Lu}\\p{Ll}+)?\\s*[,:—–]\\s`, 'iu');
// "said Noted: 50 lakhs": a reported clause never opens with a word and a colon.
const SAID_COLON_RE = /\bsaid\s+[\p{L}']+:\s/u;

// Acknowledgements that are themselves the act ("Noted: 50 lakhs", "Booked for Monday at 5pm"): a
// past participle with its subject dropped, as speech does. Closed class of the acts an agent
// reports; the compressor restores the subject ("Asha (agent) booked for Monday ...").
const ACK_RE = /^(noted|booked|confirmed|scheduled|rescheduled|arranged|sent|updated|saved|added|cancell?ed|received)\b\s*:?\s*/i;

/** "Noted: 50 lakhs near Whitefield" → `{verb: 'noted', rest: '50 lakhs near Whitefield'}`; null when the sentence does not open with one. */
export function acknowledgement(sentence: string): { verb: string; rest: string } | null {
  const m = ACK_RE.exec(sentence);
  return m ? { verb: m[1]!.toLowerCase(), rest: sentence.slice(m[0].length) } : null;
}
