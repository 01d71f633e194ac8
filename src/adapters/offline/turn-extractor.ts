import type { FieldDef } from '../../core/extraction-schema.ts';
import type { FactSource, FactValue } from '../../core/types.ts';
import { currencyMentioned } from '../../text/money.ts';
import { isMoney } from '../../text/values.ts';
import { stem } from '../../text/stem.ts';
import { STOPWORDS } from '../../core/stopwords.ts';
import { splitClauses, splitSentences, type Clause } from './clauses.ts';
import { findCues, type CompiledField, type CueHit } from './field-cues.ts';
import { keyedValues } from './keyed-values.ts';
import { qualifierIn } from './qualifiers.ts';
import { answerPhrase, captureAfter, captureName, findDosages, findEmails, findPhones, selfIntroduction, type Capture } from './text-capture.ts';
import { answerPolarity, sentencePolarity, changeDate, dateCandidates, enumCandidates, moneyCandidates, numberCandidates, withoutChangedFrom, type Candidate } from './value-finders.ts';

/** How a value was tied to its field: a cue in the clause, the agent's question, or nothing. */
type Link = 'strong' | 'question' | 'weak' | 'none';

/** A fact read from one turn, before qualifiers and cross-turn bookkeeping. */
export interface TurnFact {
  field: FieldDef;
  value: FactValue;
  source: FactSource;
  validFrom?: string;
  /** Clause index and character position: the later mention of a field in a turn wins. */
  order: number;
  /** Describes a former state ("my budget was 50 lakhs"): loses to a present mention in the same turn. */
  former: boolean;
  /** The value came from the answer to the agent's question (its turn is evidence too). */
  viaQuestion: boolean;
  /** Said after a correction cue or as the fix of a self-correction (see corrections.ts). */
  correction: boolean;
  /** One of several values of a keyed field in the clause: the part of the clause naming its qualifier. */
  scope?: string;
  /** The clause the value was read from (a keyed value's qualifier is looked for there first). */
  clause: string;
  /** Said as no longer holding ("I stopped taking metformin"): ends the value, names no successor. */
  ended?: boolean;
}

/** What one turn is read with. */
export interface TurnReading {
  fields: readonly CompiledField[];
  /** Normalised text (see normalizeSpeech). */
  text: string;
  ts: number;
  /** `user`: the caller speaking. `agent`: an agent turn the caller confirmed (second person = the caller). */
  perspective: 'user' | 'agent';
  /** Fields the agent's preceding question asked about (user perspective only). */
  askedFields: ReadonlySet<string>;
  lowAsr: boolean;
  /** Currency the conversation last named, for amounts said bare ("goes up to 27,000"). */
  currency?: string;
  /** Spans of `text` where a correction is spoken (applySelfCorrections). */
  corrections?: ReadonlyArray<{ start: number; end: number }>;
}

const MAX_CUE_DISTANCE = 60;
const AGENT_SELF_RE = /\b(?:my|our|mine|ours)\b|\b(?:me|us)\s+(?:at|on|via|by)\b/i;
const NEGATED_CUE_RE = /\b(?:not|no longer|never|stopped|quit|gave up|don't|doesn't|didn't|isn't|wasn't|aren't|not even)\s+(?:\w+\s+)?$/i;
/** A cue negated by an ending ("stopped taking", "no longer on", "came off"): the value it names has ended. */
const ENDED_CUE_RE = /\b(?:no longer|stopped|quit|gave up|came off|went off|am off|i'm off|discontinued)\s+(?:\w+\s+)?$/i;
/** "I'm not taking metformin anymore", "I don't see Dr. Rao any more": a negated present that used to hold. */
const ANYMORE_RE = /\b(?:any ?more|now)\b/i;

function distance(c: Candidate, hits: readonly CueHit[], ownWords = true): { d: number; hit: CueHit } | null {
  let best: { d: number; hit: CueHit } | null = null;
  for (const h of hits) {
    if (!ownWords && h.start >= c.start && h.end <= c.end) continue;
    const d = c.start >= h.end ? c.start - h.end : c.end <= h.start ? (h.start - c.end) * 1.5 : 0;
    if (d <= MAX_CUE_DISTANCE && (best === null || d < best.d || (d === best.d && h.strength === 'strong'))) best = { d, hit: h };
  }
  return best;
}

/** Facts of every schema field in one turn. */
export function readTurn(r: TurnReading): TurnFact[] {
  const out: TurnFact[] = [];
  const clauses = splitClauses(r.text, r.perspective);
  const firstSentence = splitSentences(r.text)[0] ?? '';
  let carry = new Set<string>();
  let carrySentence = -1;
  clauses.forEach((clause, ci) => {
    // "My office number is 080 4123 4567", "you can reach me on ...": the agent speaking of itself,
    // never the caller's value (unless it also names something of the caller's: "your budget, as per my notes").
    if (r.perspective === 'agent' && AGENT_SELF_RE.test(clause.text) && !/\byour\b/i.test(clause.text)) return;
    const answerClause = ci === 0 || firstSentence.includes(clause.text);
    const cues = new Map(r.fields.map((cf) => [cf.field.name, findCues(cf, clause.text)]));
    const emit = (cf: CompiledField, value: FactValue, link: Link, pos: number, used: readonly Candidate[], scope?: string, ended = false) => {
      const f = cf.field;
      if (r.perspective === 'agent' && link !== 'strong') return;
      const at = clause.offset + pos;
      const correction = (r.corrections ?? []).some((c) => at >= c.start && at < c.end);
      // "Sorry, I meant 65 lakhs, not 60": a value the caller marks as a fix is said on purpose, so
      // the only field of its type that could hold it is meant, not guessed.
      let source: FactSource = link === 'strong' || link === 'question' || (link === 'none' && correction) ? 'explicit' : 'inferred';
      const hedged = clause.hedgeAt >= 0 && clause.hedgeAt <= pos;
      if (hedged || r.lowAsr || (clause.question && r.perspective === 'user')) source = 'inferred';
      if (r.perspective === 'agent') source = 'confirmed';
      const fact: TurnFact = { field: f, value, source, order: ci * 10_000 + pos, former: clause.former, viaQuestion: link === 'question', correction, clause: clause.text };
      if (scope !== undefined) fact.scope = scope;
      if (ended) fact.ended = true;
      if (f.type !== 'date' && f.type !== 'datetime') {
        const when = changeDate(clause.text, r.ts, clause.past, used);
        if (when) fact.validFrom = `${when.date}T${String(when.time?.h ?? 0).padStart(2, '0')}:${String(when.time?.m ?? 0).padStart(2, '0')}:00.000Z`;
      }
      out.push(fact);
    };
    const none = (cf: CompiledField) => (cues.get(cf.field.name)?.length ?? 0) === 0;
    const asked = (cf: CompiledField) => answerClause && r.askedFields.has(cf.field.name) && none(cf);
    // "My budget was 50 lakhs but now it's 80": the cue of a clause carries to the rest of its sentence.
    if (carrySentence !== clause.sentenceIndex) carry = new Set();
    carrySentence = clause.sentenceIndex;
    const carried = (cf: CompiledField) => carry.has(cf.field.name) && none(cf);
    readTyped(r, clause, cues, asked, carried, emit);
    for (const [name, hits] of cues) if (hits.some((h) => h.strength === 'strong')) carry.add(name);
    for (const cf of r.fields) if (cf.field.type === 'string') readString(r, clause, cf, cues.get(cf.field.name) ?? [], asked(cf), emit);
  });
  return out;
}

// A date's own words are no cue for it: "3 days back" does not ask for a call back.
const isDate = (cf: CompiledField) => cf.field.type === 'date' || cf.field.type === 'datetime';

type Emit = (cf: CompiledField, value: FactValue, link: Link, pos: number, used: readonly Candidate[], scope?: string, ended?: boolean) => void;

/** Money, numbers, dates and enums: each value goes to the field whose cue is nearest. */
function readTyped(r: TurnReading, clause: Clause, cues: Map<string, CueHit[]>, asked: (cf: CompiledField) => boolean, carried: (cf: CompiledField) => boolean, emit: Emit): void {
  const text = clause.text;
  const money = moneyCandidates(text, 'USD');
  const datesAll = dateCandidates(text, r.ts, clause.past, true);
  const masked = [...money.filter((m) => m.marked), ...datesAll];
  const cands = (cf: CompiledField): Candidate[] => {
    switch (cf.field.type) {
      case 'money':
        return moneyCandidates(text, cf.field.currency ?? currencyMentioned(`${cf.field.description} ${(cf.field.hints ?? []).join(' ')}`) ?? r.currency ?? 'USD');
      case 'date':
        return dateCandidates(text, r.ts, clause.past, false);
      case 'datetime':
        return datesAll;
      case 'number': {
        const own = cues.get(cf.field.name) ?? [];
        return numberCandidates(text, masked).filter((n) => !own.some((h) => n.start < h.end && h.start < n.end));
      }
      case 'enum':
        return enumCandidates(cf, text);
      default:
        return [];
    }
  };
  const typed = r.fields.filter((cf) => ['money', 'date', 'datetime', 'number', 'enum'].includes(cf.field.type));
  const perField = new Map(typed.map((cf) => [cf.field.name, withoutChangedFrom(text, cands(cf))]));
  // Each span is claimed by the field with the nearest cue (money spans are shared by all money fields).
  const claims = new Map<string, { field: string; d: number }>();
  for (const cf of typed) {
    for (const c of perField.get(cf.field.name) ?? []) {
      const near = distance(c, cues.get(cf.field.name) ?? [], !isDate(cf));
      if (!near) continue;
      const key = `${cf.field.type === 'datetime' ? 'date' : cf.field.type}:${c.start}`;
      const prev = claims.get(key);
      if (!prev || near.d < prev.d) claims.set(key, { field: cf.field.name, d: near.d });
    }
  }
  const moneyFields = typed.filter((cf) => cf.field.type === 'money');
  for (const cf of typed) {
    const name = cf.field.name;
    const list = perField.get(name) ?? [];
    const hits = cues.get(name) ?? [];
    let best: { c: Candidate; d: number; link: Link } | null = null;
    for (const c of list) {
      if (isMoney(c.value) && !c.marked && c.value.amount < 100) continue;
      const key = `${cf.field.type === 'datetime' ? 'date' : cf.field.type}:${c.start}`;
      const near = distance(c, hits, !isDate(cf));
      if (!near || claims.get(key)?.field !== name) continue;
      if (cf.field.type === 'money' && !c.marked && near.d > 25) continue;
      const link: Link = near.hit.strength === 'strong' ? 'strong' : 'weak';
      if (!best || near.d < best.d) best = { c, d: near.d, link };
    }
    if (!best && hits.length === 0) {
      const free = list.filter((c) => c.marked && !claims.has(`${cf.field.type === 'datetime' ? 'date' : cf.field.type}:${c.start}`));
      // A bare "90" answering "How much can you spend?" lacks its unit (90 lakhs?); "27,000" does not.
      const bare = list.find((c) => isMoney(c.value) && c.value.amount >= 1000);
      const answer = free[0] ?? (cf.field.type === 'money' ? bare : list[0]);
      if (asked(cf) && answer) best = { c: answer, d: 0, link: 'question' };
      else if (carried(cf) && free[0]) best = { c: free[0], d: 0, link: 'strong' };
      // The only money field takes an uncued marked amount said by the caller, as a guess.
      else if (cf.field.type === 'money' && moneyFields.length === 1 && free[0] && clause.personal) best = { c: free[0], d: 0, link: 'none' };
      else if (cf.field.type === 'enum' && free[0] && clause.personal) best = { c: free[0], d: 0, link: 'none' };
    }
    if (!best) continue;
    // "30,000 for the MG Road flat and 45,000 for the Indiranagar one": one fact per qualifier.
    const keyBy = cf.field.keyBy;
    if (keyBy && best.link !== 'none') {
      const kind = cf.field.type === 'datetime' ? 'date' : cf.field.type;
      const owner = (c: Candidate) => claims.get(`${kind}:${c.start}`)?.field ?? name;
      const parallel = list.filter((c) => owner(c) === name && (c.marked || (isMoney(c.value) && c.value.amount >= 1000)));
      const fieldTarget = r.fields.some((f) => f.field.name === keyBy);
      const several = keyedValues(text, parallel, (seg) => qualifierIn(seg, fieldTarget));
      if (several) {
        for (const { c, scope } of several) emit(cf, c.value, best.link, c.start, [c], scope);
        continue;
      }
    }
    emit(cf, best.c.value, best.link, best.c.start, [best.c]);
  }
  // A caller asking "are pets allowed?" says nothing about their own pets.
  const booleans = clause.question && r.perspective === 'user' ? [] : r.fields.filter((f) => f.field.type === 'boolean');
  for (const cf of booleans) {
    const hits = cues.get(cf.field.name) ?? [];
    const hit = hits.find((h) => h.strength === 'strong') ?? hits[0];
    // Polarity is read over the whole sentence: "No pets, but my wife's cat visits" is a no.
    if (hit && !carried(cf)) emit(cf, sentencePolarity(clause.sentence), hit.strength === 'strong' ? 'strong' : 'weak', hit.start, []);
    else if (asked(cf)) {
      const yes = answerPolarity(text);
      if (yes !== null) emit(cf, yes, 'question', 0, []);
    }
  }
}

/** String fields: a capture after a cue, a pattern (email, phone, dose), or the answer to the agent's question. */
function readString(r: TurnReading, clause: Clause, cf: CompiledField, hits: readonly CueHit[], asked: boolean, emit: Emit): void {
  const text = clause.text;
  const kind = cf.kind ?? 'text';
  const patterned = kind === 'email' ? findEmails(text) : kind === 'phone' ? findPhones(text) : kind === 'dosage' ? findDosages(text) : null;
  if (patterned) {
    const first = patterned[0];
    // A pattern this specific needs no cue to be explicit when the caller gives it about themselves.
    const link: Link = hits.length > 0 ? 'strong' : asked ? 'question' : clause.personal ? 'strong' : 'none';
    if (first) emit(cf, first.value, link, first.start, []);
    return;
  }
  let got: { cap: Capture; link: Link; ended?: boolean } | null = null;
  if (r.perspective === 'agent' && kind === 'self-name') {
    // "Am I speaking with Daniel Okafor?" confirmed by "Yes, speaking."
    const ask = /\b(?:speaking (?:with|to)|talking (?:with|to)|is this|is that)\s+/i.exec(text);
    const cap = ask ? captureName(text, ask.index + ask[0].length, false, true) : null;
    if (cap) got = { cap, link: 'strong' };
  }
  for (const h of got ? [] : hits) {
    // "I stopped taking ibuprofen", "I'm not on anything": a negated cue names nothing current,
    // but an ending names what held until now: that value ends.
    const before = text.slice(Math.max(0, h.start - 16), h.start);
    if (NEGATED_CUE_RE.test(before)) {
      const ending = ENDED_CUE_RE.test(before) || ANYMORE_RE.test(text.slice(h.end));
      const cap =
        ending && r.perspective === 'user' && kind !== 'self-name' && kind !== 'person-name'
          ? kind === 'text'
            ? textAfter(text, h, r.ts)
            : captureAfter(text, h.end, kind, h.proper || kind === 'place' || kind === 'employer', r.ts)
          : null;
      if (cap && !/^(?:anything|any|it|that|them|this)\b/i.test(cap.value)) {
        got = { cap: { ...cap, value: cap.value.replace(/\s+(?:any ?more|now)$/i, '') }, link: 'strong', ended: true };
        break;
      }
      continue;
    }
    if (r.perspective === 'agent' && kind === 'self-name' && !/\byour\s+(?:full\s+)?name\b/i.test(text)) break;
    // "his name is Kyle", "my son's name is Max": someone else's name, not the speaker's.
    if (kind === 'self-name' && OTHERS_NAME_RE.test(text.slice(Math.max(0, h.start - 24), h.start))) continue;
    let cap: Capture | null;
    if (kind === 'self-name' || kind === 'person-name') cap = captureName(text, h.end, !h.proper, kind === 'self-name');
    else if (kind === 'text') cap = textAfter(text, h, r.ts);
    else cap = captureAfter(text, h.end, kind, h.proper || kind === 'place' || kind === 'employer', r.ts);
    if (cap) {
      got = { cap, link: h.strength === 'strong' ? 'strong' : 'weak' };
      break;
    }
  }
  if (!got && kind === 'self-name' && r.perspective === 'user') {
    const intro = selfIntroduction(text);
    if (intro) got = { cap: intro, link: 'strong' };
  }
  if (!got && asked) {
    const cap = answerPhrase(text, kind, r.ts);
    if (cap) got = { cap, link: 'question' };
  }
  if (got && kind === 'text' && !namesSomething(got.cap.value, cf.field)) got = null;
  if (got) emit(cf, got.cap.value, got.link, got.cap.start, [], undefined, got.ended);
}

const OPENS_NOTHING_RE =
  /^(?:i|i'm|i've|i'd|i'll|you|you're|we|he|she|they|it|it's|me|us|him|them|hey|hi|hello|want|wants|wanted|made|make|makes|doing|did|said|what|which|who|how|why|when|where|on|in|at|to|into|of|for|with|about)\b/i;
const ENDS_OPEN_RE = /\b(?:a|an|the|to|into|of|for|on|in|at|with|and|or|but|my|your|our|their|is|are|was|were|be|that|this|some|while|when|because|'cause|cause|cuz|since|as|if|than|until|though)$/i;
/**
 * Words that judge or gesture rather than name: a value made only of these and its field's
 * own name ("family is everything", "really nice family", "such incredible relationships",
 * "wanna start") states a feeling or an intention to begin, not a member, a status or an activity.
 */
const SAYS_NOTHING = new Set(
  (
    'everything everyone everybody anything anyone something someone nothing nobody all stuff thing things lot lots ' +
    'amazing awesome great good nice wonderful incredible special cool fun beautiful lovely fantastic perfect best better ' +
    'worst bad terrible awful hard tough important really truly totally super pretty quite kind sort such same new old little big whole entire ' +
    'start starting started begin beginning try trying want wanna gonna going idea'
  ).split(' '),
);
const OTHERS_NAME_RE = /\b(?:his|her|their|its|our|your|[a-z]+'s)\s+(?:full\s+|first\s+|last\s+|nick)?$/i;

/**
 * Does a free-text capture name something? Not when it is a fragment ("I love", "What pet",
 * "considering adopting a", "interests into") or only repeats its field's name ("pet is pet",
 * "family member is her family", "goal is goals"): such a value would sit first in search
 * and in the context block while saying nothing.
 */
function namesSomething(value: string, field: FieldDef): boolean {
  const v = value.trim().replace(/[.,!?;:]+$/, '');
  if (OPENS_NOTHING_RE.test(v) || ENDS_OPEN_RE.test(v)) return false;
  // The field's own name only: a hint may be a value itself ("headache" for a symptom).
  const own = new Set((field.name.match(/[a-z]+/g) ?? []).map(stem));
  const content = (v.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => !STOPWORDS.has(w) && !SAYS_NOTHING.has(w));
  return content.some((w) => !own.has(stem(w)));
}

/**
 * Free text after a cue when the cue introduces it ("feeling dizzy", "symptom is a cough"),
 * else the cue itself with its modifiers ("my knee pain" → "knee pain"). Captures that are
 * numbers or degree words ("about a 6", "much better") are no value of a text field.
 */
function textAfter(text: string, h: CueHit, refTs: number): Capture | null {
  const cue = text.slice(h.start, h.end);
  const introduces = /(?:ing|ed|\bon|\bin|\bat|\bfor|\bto|\bfrom|\bas|\bof|\bis|\bwith|\bare|'s)$/i.test(cue) || /^\s*(?:is|are|was|were|'s|:)\s/i.test(text.slice(h.end));
  let cap = introduces ? captureAfter(text, h.end, 'text', false, refTs) : null;
  if (cap && /\d|^(?:about|around|roughly|approximately|like|maybe|probably|just|only|very|really|so|too|quite|pretty|a bit|much|better|worse|fine|good|okay|ok|great|bad)\b/i.test(cap.value))
    cap = null;
  return cap ?? (h.strength === 'strong' ? cueAsValue(text, h) : null);
}

/** A cue that is itself the value ("I have a bad headache" → "bad headache"), with up to two words before it. */
function cueAsValue(text: string, h: CueHit): Capture | null {
  const cue = text.slice(h.start, h.end);
  if (/\b(is|are|at|in|on|of|for|to|my|me|i|i'm|am|feeling|been|taking|have)$/i.test(cue)) return null;
  const before = text.slice(0, h.start).trimEnd().split(/\s+/).slice(-2);
  const mods: string[] = [];
  for (let i = before.length - 1; i >= 0; i--) {
    const w = before[i]!.replace(/[^a-z-]/gi, '');
    if (
      !w ||
      w !== before[i] ||
      /^(a|an|the|my|i|have|has|had|got|some|any|no|and|or|but|so|with|of|on|in|at|to|for|from|about|by|into|over|like|than|is|am|i'm|been|feel|feeling|this|that|it)$/i.test(w)
    )
      break;
    mods.unshift(w);
  }
  const start = mods.length ? text.lastIndexOf(mods[0]!, h.start) : h.start;
  return { value: [...mods, cue].join(' '), start, end: h.end };
}
