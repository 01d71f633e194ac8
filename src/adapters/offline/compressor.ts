import { iso } from '../../core/clock.ts';
import { speakerName } from '../../core/speaker.ts';
import { STOPWORDS } from '../../core/stopwords.ts';
import type { Turn } from '../../core/types.ts';
import type { AcuDraft, CompressionInput } from '../../ports/extractor.ts';
import { looksPast, rewriteDates, ymd } from '../../text/dates.ts';
import { acknowledgement, dropLeadIns } from '../../text/lead-ins.ts';
import { adjacent, contentWords, isConfirmation, isFiller, isQuestion, isReaction, splitSentences } from './clauses.ts';
import { rewritePronouns, thirdPerson, type Voices } from './pronouns.ts';
import { captureName } from './text-capture.ts';

/** Display names for one turn: "Rajiv Kumar" or "the user", "Asha" or "the agent". */
interface Names {
  user: string;
  agent: string;
  userKnown: boolean;
  agentKnown: boolean;
}

const LEAD_RE = /^(?:(?:yes|yeah|yep|yup|no|nope|oh|um|uh|umm|well|so|okay|ok|sure|great|right|hi|hello|hey|done|alright|perfect)(?:\s+[A-Z][a-z]+)?\s*[,!.]?\s+)+/i;
const YES_NO_LEAD_RE = /^(yes|yeah|yep|yup|sure|correct|right|exactly|absolutely|of course|no|nope|nah)\b[\s,.!]*/i;
const PERSONAL_RE = /\b(i|i'm|i've|i'd|i'll|me|my|we|we're|our|us|let's)\b/i;
const PHATIC_Q_RE = /^(?:and\s+|so\s+)?(anything else|is there anything else|how are you|how can i help|how may i help|what else|can i help you with anything else|shall we)\b/i;
const IMPERATIVE_RE = /^(?:please\s+)?(send|call|book|email|mail|text|message|tell|give|show|schedule|share|forward|remind|cancel|reschedule|check|arrange|keep|note|add|remove|update)\b/i;
const LOWER_STARTERS = new Set(
  (
    "the a an it its it's that's there's here's what's that this there these those yes no yeah sure so and but also maybe probably perhaps booked done great good okay ok well actually " +
    'just around about with for in on at since from what when where how which who why is are do does did can could would will please let ' +
    'mostly only still not nothing something anything everything some any all both either neither one two three'
  ).split(' '),
);
const TAG_Q_RE = /^(.*?)[,\s]+(?:right|correct|is that right|is that correct|isn't it|yes|no|ok|okay|yeah)\s*\??$/i;
const YN_Q_RE = /^(do|does|did|are|were|have|has|will|would|can|could|should)\s+you\s+(.+?)\??$/i;
const AGENT_OFFER_RE = /^(shall|should|can|may|could)\s+(?:i|we)\s+(.+?)\??$/i;
const TOPIC_Q_RE =
  /^(?:what|which)(?:'s|\s+is|\s+are|\s+was)\s+(?:your|the)\s+(.+?)\??$|^(?:what|which|how much|how many)\s+(.+?)\s+(?:do|did|would|will|are|can)\s+you\s+(?:have in mind|want|need|prefer|like|have|plan|afford|looking for)\b.*$/i;

const strip = (s: string) =>
  s
    .trim()
    .replace(/[.!?]+$/, '')
    .trim();
const capFirst = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
// A sentence adverb before a comma ("Unfortunately, ...", "Recently, ..."): a common word, lower
// case after "said". Seven letters or more, so a name addressed by comma ("Kelly, ...") keeps its capital.
const SENTENCE_ADVERB_RE = /^[A-Z][a-z]{4,}ly(?=,)/;
function lcFirst(s: string): string {
  const first = (/^[A-Za-z']+/.exec(s)?.[0] ?? '').toLowerCase();
  return LOWER_STARTERS.has(first) || SENTENCE_ADVERB_RE.test(s) ? s.charAt(0).toLowerCase() + s.slice(1) : s;
}

/**
 * Stage 3 without a model: every informative sentence of a segment becomes a standalone fact:
 * pronouns replaced by names with roles, relative dates made absolute against the turn's time,
 * "as of <day>" appended, and an agent question merged with a bare answer ("What's your budget?"
 * + "Around 80 lakhs" → "Rajiv Kumar (user) said the budget is around 80 lakhs, as of ...").
 * Fillers produce nothing. Deterministic.
 */
export function compressSegment(input: CompressionInput): AcuDraft[] {
  const turns = [...input.turns].filter((t) => t.role === 'user' || t.role === 'agent').sort((a, b) => a.ts - b.ts || a.seq - b.seq);
  const segUser = speakerName(input.userName) ?? speakerName(turns.find((t) => t.role === 'user' && speakerName(t.speaker))?.speaker);
  const segAgent = speakerName(input.agentName) ?? speakerName(turns.find((t) => t.role === 'agent' && speakerName(t.speaker))?.speaker);
  let learned: string | undefined;
  let learnedAgent: string | undefined;
  const drafts: AcuDraft[] = [];
  const consumed = new Map<string, number>();
  const namesFor = (t: Turn): Names => {
    const user = (t.role === 'user' ? speakerName(t.speaker) : undefined) ?? segUser ?? learned;
    const agent = (t.role === 'agent' ? speakerName(t.speaker) : undefined) ?? segAgent ?? learnedAgent;
    return { user: user ?? 'the user', agent: agent ?? 'the agent', userKnown: user !== undefined, agentKnown: agent !== undefined };
  };
  turns.forEach((t, i) => {
    if (t.role === 'agent' && !segAgent && !learnedAgent) learnedAgent = /\b(?:[Tt]his is|[Mm]y name is|I'm|I am)\s+([A-Z][a-z]+)\b(?=\s+(?:from|with|at|calling|here)\b)/.exec(t.text)?.[1];
    const names = namesFor(t);
    const sentences = splitSentences(heard(t)).slice(consumed.get(t.turnId) ?? 0);
    const own = new TurnBodies();
    const after = turns[i + 1];
    if (t.role === 'user') {
      // The user's last question, answered by the agent's next turn, is one fact with its answer.
      const replied = after?.role === 'agent' && adjacent(t, after, input.turns) ? after : undefined;
      const uqi = sentences.findLastIndex((s) => isQuestion(s));
      const reply = replied && uqi >= 0 ? replyOf(replied, namesFor(replied)) : null;
      const mergeAt = reply && answers(reply.text) && !PHATIC_Q_RE.test(strip(sentences[uqi]!)) ? uqi : -1;
      for (const [si, s] of sentences.entries()) {
        if (si === mergeAt && reply && replied) {
          const agentNames = namesFor(replied);
          drafts.push(draft(mergeAnswer(s, t, reply.text, replied, party(agentNames, 'user'), party(agentNames, 'agent')), [t, replied], replied));
          if (dependent(reply.text)) consumed.set(replied.turnId, reply.index + 1);
          continue;
        }
        if (!learned && !segUser) {
          const intro = /\bmy name(?:'s|\s+is)\s+/i.exec(s);
          const name = intro ? captureName(s, intro.index + intro[0].length, true, true) : null;
          if (name) learned = name.value;
        }
        const intro = /^(?:(?:hi|hello|hey)\b[^,]*,\s*)?(?:my name(?:'s|\s+is)|this is|i am|i'm)\s+/i.exec(s.replace(/[’‘]/g, "'"));
        const self = intro ? captureName(s, intro[0].length, /name/i.test(intro[0]), true) : null;
        if (self && strip(s).endsWith(self.value)) own.add(`The user's name is ${self.value}`, 2);
        else if (!isFiller(withoutNames(s, names)) && !isReaction(s)) own.add(statement(s, t, userVoices(names), names, 'user'), isQuestion(s) ? 2 : contentWords(withoutNames(s, names)));
      }
      for (const body of own.end()) drafts.push(draft(body, [t], t));
      return;
    }
    const next = after?.role === 'user' && adjacent(t, after, input.turns) ? after : undefined;
    const qi = sentences.findLastIndex((s) => isQuestion(s));
    for (const [si, s] of sentences.entries()) {
      if (si === qi || isQuestion(s) || isFiller(withoutNames(s, names)) || isReaction(s)) continue;
      const intro = agentIntro(s, t, names);
      own.add(intro ?? statement(s, t, agentVoices(names), names, 'agent'), intro ? 2 : contentWords(withoutNames(s, names)));
    }
    for (const body of own.end()) drafts.push(draft(body, [t], t));
    const reply = next ? replyOf(next, namesFor(next)) : null;
    const answer = reply?.text;
    // "Am I speaking with Meera Shah?" answered "Yes" names the caller for the rest of the segment.
    const asked = qi >= 0 ? /\b(?:speaking (?:with|to)|talking (?:with|to)|is this)\s+/i.exec(sentences[qi]!) : null;
    if (asked && answer && !segUser && !learned && isConfirmation(answer)) {
      learned = captureName(sentences[qi]!, asked.index + asked[0].length, false, true)?.value;
    }
    if (next && reply && answer && qi >= 0 && !isQuestion(answer) && !PHATIC_Q_RE.test(strip(sentences[qi]!))) {
      const nextNames = namesFor(next);
      drafts.push(draft(mergeAnswer(sentences[qi]!, t, answer, next, party(nextNames, 'agent'), party(nextNames, 'user')), [t, next], next));
      if (dependent(answer)) consumed.set(next.turnId, reply.index + 1);
    }
  });
  return drafts;
}

/**
 * The reply's first sentence that says something, past openers such as "Thanks, Maria!": a
 * question is context for its answer, and the answer is what a later search asks about
 * ("What gave you the idea?" → "I'm obsessed with those, so I made ..."). Null when the reply
 * says nothing before asking back.
 */
function replyOf(reply: Turn, names: Names): { text: string; index: number } | null {
  const sentences = splitSentences(heard(reply));
  const index = sentences.findIndex((s) => !isFiller(withoutNames(s, names)));
  return index >= 0 && !isQuestion(sentences[index]!) ? { text: sentences[index]!, index } : null;
}

/**
 * What the caller heard of a turn. An interrupted agent turn ends mid-clause ("Which area are you
 * considering, and what is your"): the function words at the cut and the comma before them are
 * dropped, so the memory quotes whole words of a clause ("Which area are you considering"), not a
 * half question; the ACU still says the turn was interrupted.
 */
function heard(t: Turn): string {
  const text = t.text.trimEnd();
  if (!t.interrupted || /[.!?…]["')]?$/.test(text)) return t.text;
  const words = text.split(/\s+/);
  const lastStart = words.length - (splitSentences(text).at(-1)?.split(/\s+/).length ?? words.length);
  while (words.length > lastStart + 1) {
    const w = words[words.length - 1]!;
    if (/[,;:—–-]$/.test(w)) {
      words[words.length - 1] = w.replace(/[,;:—–-]+$/, '');
      break;
    }
    if (!STOPWORDS.has(w.toLowerCase().replace(/[^\p{L}']/gu, ''))) break;
    words.pop();
  }
  return words.join(' ');
}

/** Content words a sentence needs to stand alone as an ACU; fewer, and it joins a neighbour. */
const STANDALONE_WORDS = 2;

/**
 * The ACU bodies of one turn's own sentences. A thin sentence ("It was awesome", "They sure
 * are") means nothing alone and, as its own ACU, takes a search slot from a fact: it joins the
 * sentence before it in the same turn (or the next one when it opens the turn). A thin turn
 * with no other sentence stays only if it has some content at all.
 */
class TurnBodies {
  private readonly bodies: string[] = [];
  private carry: { body: string; words: number } | null = null;

  add(body: string, words: number): void {
    if (words < STANDALONE_WORDS) {
      if (this.bodies.length > 0) this.bodies[this.bodies.length - 1] += `; ${lcFirst(body)}`;
      else this.carry = this.carry ? { body: `${this.carry.body}; ${lcFirst(body)}`, words: this.carry.words + words } : { body, words };
      return;
    }
    this.bodies.push(this.carry ? `${this.carry.body}; ${lcFirst(body)}` : body);
    this.carry = null;
  }

  end(): string[] {
    if (this.carry && this.carry.words > 0) this.bodies.push(this.carry.body);
    this.carry = null;
    return this.bodies;
  }
}

function draft(body: string, used: Turn[], last: Turn): AcuDraft {
  const interrupted = used.some((t) => t.role === 'agent' && t.interrupted) && !body.includes('(interrupted)') ? ' (interrupted)' : '';
  return { text: `${capFirst(strip(body))}${interrupted}, as of ${ymd(last.ts)}.`, turnRefs: used.map((t) => t.turnId), validAt: iso(last.ts) };
}

const userVoices = (n: Names): Voices => ({ speaker: n.user, listener: n.agent, speakerGroup: `${n.user} and family`, ...(n.userKnown ? { self: 'the user' } : {}) });
const agentVoices = (n: Names): Voices => ({ speaker: n.agent, listener: n.user, speakerGroup: `${n.agent}'s team`, ...(n.agentKnown ? { self: 'the agent' } : {}) });
const tag = (name: string, known: boolean, role: string) => (known ? `${name} (${role})` : name);

function withoutNames(s: string, n: Names): string {
  let out = s;
  for (const name of [n.user, n.agent]) for (const part of name.split(/\s+/)) if (part.length > 1) out = out.replace(new RegExp(`\\b${part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'gi'), ' ');
  return out;
}

/** A sentence rewritten in the third person with absolute dates, led by its speaker and role. */
function statement(s: string, t: Turn, voices: Voices, names: Names, role: 'user' | 'agent'): string {
  const core = withoutLeadIns(s, names);
  const rewrite = (x: string) => strip(rewritePronouns(rewriteDates(x, t.ts, { past: looksPast(x) }), voices));
  const body = rewrite(core);
  const speaker = role === 'user' ? names.user : names.agent;
  const known = role === 'user' ? names.userKnown : names.agentKnown;
  const who = tag(speaker, known, role);
  if (isQuestion(core)) return `${who} asked "${capFirst(body)}?"`;
  // "Noted: 50 lakhs" is the speaker's act with its subject dropped: "Meera (agent) noted 50 lakhs", not "said Noted: ...".
  const ack = acknowledgement(core);
  if (ack) return ack.rest ? `${who} ${ack.verb} ${rewrite(ack.rest)}` : `${who} ${ack.verb}`;
  if (IMPERATIVE_RE.test(core)) {
    const other = role === 'user' ? names.agent : names.user;
    return `${who} asked ${other} to ${lcFirst(body.replace(/^please\s+/i, ''))}`;
  }
  // The sentence already names its speaker ("Rajiv Kumar's budget is ..."): tag that mention
  // rather than repeat the name in a "said" prefix (repeated names drown the fact in search).
  const at = new RegExp(`\\b${speaker.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i').exec(body)?.index ?? -1;
  // An agent's sentence keeps its "said" unless it opens with the agent: who said it matters there.
  if (at < 0 || (role === 'agent' && at > 0)) return `${who} said ${lcFirst(body)}`;
  // A possessive mention ("Rajiv Kumar's loan") names whose thing it is; a role tag inside it
  // ("Rajiv Kumar's (user) loan") reads as a splice, so it stays untagged.
  if (!known || body.startsWith("'s", at + speaker.length)) return body;
  const end = at + speaker.length;
  return `${body.slice(0, end)} (${role})${body.slice(end)}`;
}

/**
 * A sentence without what opens it and states nothing: interjections ("so", "oh", "yes"), discourse
 * markers ("Good news though, ...") and acknowledgements ("Wonderful, ...", "Thanks Asha, ..."),
 * repeated while one more comes off. An acknowledgement that is the act itself ("Noted: ...") stays
 * for statement() to turn into a verb.
 */
function withoutLeadIns(s: string, names: Names): string {
  const empty = (segment: string) => acknowledgement(segment) === null && isFiller(withoutNames(segment, names));
  let core = s.trim();
  let prev = '';
  while (prev !== core) {
    prev = core;
    core = dropLeadIns(core.slice(LEAD_RE.exec(core)?.[0].length ?? 0).trim() || core, empty);
  }
  return core || s;
}

/** "Hello, this is Asha from Prestige Homes" → "Asha (agent) is from Prestige Homes". */
function agentIntro(s: string, t: Turn, n: Names): string | null {
  const m =
    /^(?:(?:[Hh]i|[Hh]ello|[Hh]ey|[Gg]ood (?:morning|afternoon|evening))\b[^,]*,\s*)?(?:[Tt]his is|[Ii]t's|I'm|I am|[Mm]y name is)?\s*([A-Z][a-z]+)(?:\s+again)?,?\s+(?:from|with|at|calling from)\s+(.+?)[.!]?$/.exec(
      s.trim(),
    );
  if (!m || !n.agentKnown || !n.agent.toLowerCase().startsWith(m[1]!.toLowerCase())) return null;
  return `${tag(n.agent, true, 'agent')} is from ${strip(rewritePronouns(rewriteDates(m[2]!, t.ts), agentVoices(n)))}`;
}

/** Is this answer meaningless without the question ("yes", "around 80 lakhs", "it was nice")? */
function dependent(answer: string): boolean {
  const a = answer.trim();
  const yn = YES_NO_LEAD_RE.exec(a);
  if (yn) {
    const rest = a.slice(yn[0].length);
    return rest.split(/\s+/).filter(Boolean).length < 4 || !PERSONAL_RE.test(rest);
  }
  if (/^(it|it's|that|that's|this|they|there|those|these|he|she)\b/i.test(a)) return true;
  return a.split(/\s+/).length <= 8 && !PERSONAL_RE.test(a);
}

/** One side of a question and its answer. */
interface Party {
  name: string;
  known: boolean;
  role: 'user' | 'agent';
}

const party = (n: Names, role: 'user' | 'agent'): Party => (role === 'user' ? { name: n.user, known: n.userKnown, role } : { name: n.agent, known: n.agentKnown, role });
const voicesOf = (p: Party, other: Party): Voices => ({
  speaker: p.name,
  listener: other.name,
  speakerGroup: p.role === 'user' ? `${p.name} and family` : `${p.name}'s team`,
  ...(p.known ? { self: `the ${p.role}` } : {}),
});

/** Does the agent's reply answer the caller's question (anything but filler or a counter-question)? */
function answers(reply: string): boolean {
  return !isFiller(reply) && !isQuestion(reply);
}

/** A question and the other side's bare answer as one fact (the agent asks and the caller answers, or the reverse). */
function mergeAnswer(q: string, qt: Turn, a: string, at: Turn, asker: Party, answerer: Party): string {
  const user = tag(answerer.name, answerer.known, answerer.role);
  const agent = tag(asker.name, asker.known, asker.role);
  const n = { agent: asker.name };
  const askerVoices = voicesOf(asker, answerer);
  const answererVoices = voicesOf(answerer, asker);
  const qCore = strip(q.replace(/^(?:(?:so|and|okay|ok|great|alright|also|now|just to confirm|to confirm)[,\s]+)+/i, ''));
  const qText = (s: string) => strip(rewritePronouns(rewriteDates(s, qt.ts), askerVoices));
  const yn = YES_NO_LEAD_RE.exec(a.trim());
  const polarity = isConfirmation(a) ? true : yn && /^(no|nope|nah)/i.test(yn[1]!) ? false : null;
  const extraRaw = yn ? strip(a.trim().slice(yn[0].length)) : '';
  const extra = extraRaw && !isFiller(extraRaw) && !isConfirmation(extraRaw) ? ` (${lcFirst(strip(rewritePronouns(rewriteDates(extraRaw, at.ts), answererVoices)))})` : '';
  // A greeting or vocative before the answer ("Hi Asha, ...") is not part of what was answered.
  // A lead-in before it ("Good news, ...") neither; a yes or no is the answer itself.
  const answerCore = dropLeadIns(a.trim().replace(GREETING_RE, ''), (seg) => isFiller(seg) && !YES_NO_LEAD_RE.test(seg));
  const answerText = lcFirst(strip(rewritePronouns(rewriteDates(answerCore, at.ts), answererVoices)));
  const offer = AGENT_OFFER_RE.exec(qCore);
  if (offer && polarity !== null) {
    const rest = qText(offer[2]!);
    return polarity ? `${user} agreed that ${n.agent} will ${rest}${extra}` : `${user} declined: ${n.agent} will not ${rest}${extra}`;
  }
  const yesNo = YN_Q_RE.exec(qCore);
  if (yesNo && polarity !== null) {
    const aux = yesNo[1]!.toLowerCase();
    const rest = qText(yesNo[2]!).replace(/^(?:still\s+)?/, '');
    const [verb, ...tail] = rest.split(/\s+/);
    const tailText = tail.join(' ').replace(/\bany\s+/i, polarity ? '' : 'any ');
    let body: string;
    if (aux === 'do' || aux === 'does') body = polarity ? `${thirdPerson(verb ?? '')} ${tailText}` : `does not ${rest}`;
    else if (aux === 'are' || aux === 'were') body = `${aux === 'are' ? 'is' : 'was'}${polarity ? '' : ' not'} ${rest}`;
    else if (aux === 'have' || aux === 'has') body = `has${polarity ? '' : ' not'} ${rest}`;
    else body = `${aux}${polarity ? '' : ' not'} ${rest}`;
    // "yet", like "any", belongs to the question or a denial: "has applied for a home loan", not "... yet".
    return `${user} ${(polarity ? body.replace(/\s+yet$/i, '') : body).trim()}${extra}`;
  }
  const tagQ = TAG_Q_RE.exec(qCore);
  if (tagQ && polarity !== null) {
    const claim = qText(tagQ[1]!);
    return polarity ? `${user} confirmed that ${lcFirst(claim)}${extra}` : `${user} said it is not true that ${lcFirst(claim)}${extra}`;
  }
  const topic = TOPIC_Q_RE.exec(qCore);
  // "the budget is <answer>" only when the answer is a bare value ("around 80 lakhs", "it's 80
  // lakhs"): a whole clause ("my budget is 50 lakhs") would be spliced into a second sentence.
  const value = topic && polarity === null ? bareValue(a.trim().replace(GREETING_RE, '')) : null;
  if (topic && value !== null) return `${user} said the ${strip(topic[1] ?? topic[2]!)} is ${lcFirst(strip(rewritePronouns(rewriteDates(value, at.ts), answererVoices)))}`;
  // The cut belongs to the question it shortened, not to the answer after it.
  const cut = qt.role === 'agent' && qt.interrupted ? ' (interrupted)' : '';
  return `${agent} asked "${capFirst(qText(qCore))}?"${cut} and ${user} answered "${answerText}"`;
}

const GREETING_RE = /^(?:(?:hi|hello|hey|good (?:morning|afternoon|evening))(?:\s+[A-Z][a-z]+)?\s*[,!.]\s*)+/i;
// "it's", "that is": the answer names the thing asked about and then gives the value.
const POINTER_LEAD_RE = /^(?:it|that|this)(?:'s|’s|\s+is|\s+was|\s+will be|\s+would be)\s+/i;
// A finite verb or a subject pronoun: the answer is a clause, not a value.
const CLAUSE_RE =
  /\b(?:i|we|you|he|she|they|is|are|am|was|were|be|been|have|has|had|do|does|did|will|would|can|could|should|shall|may|might|must|want|wants|need|needs|like|likes|got|get|think|prefer|prefers)\b|\w(?:'|’)(?:s|re|m|ve|d|ll)\b/i;

/** The value an answer gives when it is only a value ("around 80 lakhs", "it's 80 lakhs" → "80 lakhs"); null for a clause. */
function bareValue(answer: string): string | null {
  const rest = answer.replace(POINTER_LEAD_RE, '');
  return rest && !CLAUSE_RE.test(rest) ? rest : null;
}
