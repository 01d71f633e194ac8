import type { ExtractionSchema, FieldDef } from '../../core/extraction-schema.ts';
import { stem } from '../../text/stem.ts';
import { enumSynonyms } from '../../text/values.ts';

/**
 * What a string field holds, guessed from its name and description: it decides how a value is
 * captured (a person's name, an address, free text...) and which built-in cue phrases help.
 */
export type StringKind = 'self-name' | 'person-name' | 'email' | 'phone' | 'address' | 'place' | 'employer' | 'occupation' | 'medication' | 'dosage' | 'text';

/** A cue phrase occurrence strength: `strong` cues make a direct statement explicit. */
export type CueStrength = 'strong' | 'weak';

/** A compiled cue phrase. `proper`: what follows must look like a proper noun ("in Whitefield", not "in a hurry"). */
export interface Cue {
  re: RegExp;
  strength: CueStrength;
  proper: boolean;
}

/** A schema field with its cues compiled once per schema. */
export interface CompiledField {
  field: FieldDef;
  kind: StringKind | null;
  cues: Cue[];
  /** Enum only: one matcher per value (its words, inflection-tolerant, plus common synonyms). */
  values: Array<{ value: string; re: RegExp; negative: boolean }>;
}

/** One cue occurrence in a clause. */
export interface CueHit {
  start: number;
  end: number;
  strength: CueStrength;
  proper: boolean;
}

const SUFFIXES = '(?:e|es|s|ed|d|ing|er|ers|al|ation|ations|ment|ments|ness)?';

/** Regex for one word of a cue that tolerates inflection: "approved" also matches "approve", "approval". */
function wordPattern(word: string): string {
  const w = word.toLowerCase();
  if (w.length < 4 || !/^[a-z]+$/.test(w)) return w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/'/g, "'?");
  const s = stem(w);
  const base = s.endsWith('i') ? `${s.slice(0, -1)}(?:y|i)` : s;
  return base + SUFFIXES;
}

const PARTICLES = new Set(['back', 'up', 'in', 'out', 'for', 'to', 'on', 'off', 'at', 'down', 'over']);

/**
 * Regex for a cue phrase. A two-word phrasal cue may take one word inside it ("call you back"
 * for "call back", "approved me for" for "approved for"); other cues match word for word, so
 * "I'm creating a library" is not "I'm a".
 */
export function cueRegex(phrase: string): RegExp {
  const words = phrase
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .split(/[\s_-]+/)
    .filter(Boolean);
  const phrasal = words.length === 2 && words[0]!.length >= 4 && PARTICLES.has(words[1]!);
  const body = words.map(wordPattern).join(phrasal ? "(?:[\\s-]+[a-z']+)?[\\s-]+" : '[\\s-]+');
  return new RegExp(`(?<![a-z])${body}(?![a-z])`, 'gi');
}

const GENERIC_NAME_WORDS = new Set(
  'the a an of to for and or in on at by is are was has have had current currently preferred main total new last first next previous user caller customer patient tenant client applicant person their his her status type level number count value amount date time whether wants planned scheduled expected being expected desired'.split(
    ' ',
  ),
);

/**
 * Built-in cue packs for common string kinds (lower-case). `^`: a proper noun must follow.
 * `~`: a proper noun must follow and the cue is weak (a bare "in Sarjapur" is only a hint).
 */
const BUILTIN: Record<StringKind, string[]> = {
  'self-name': ['my name is', "my name's", 'name is', "name's", 'call me', 'i go by', '^i am', "^i'm", '^this is'],
  'person-name': [],
  email: ['email', 'e-mail', 'mail me', 'email id', 'email address'],
  phone: ['number is', 'phone', 'mobile', 'call me on', 'reach me on', 'reach me at', 'whatsapp'],
  address: ['address is', 'live at', 'living at', 'staying at', 'located at', 'flat at', 'house at', 'property at', 'apartment at', 'place at'],
  place: [
    '^near',
    '^prefer',
    '^looking at',
    '^looking in',
    '^based in',
    '^live in',
    '^living in',
    '^moved to',
    '^moving to',
    '^relocating to',
    '^somewhere in',
    '^close to',
    '~in',
    '~at',
    '~around',
    '~thinking about',
    '~considering',
    '~interested in',
  ],
  employer: ['^work at', '^work for', '^working at', '^working for', '^employed at', '^employed by', '^employed with', '^job at', '^job with', '^joined', '^employer is'],
  occupation: ["i'm a", 'i am a', "i'm an", 'i am an', 'i work as', 'working as', 'by profession', 'my job is', 'i am working as'],
  medication: ['taking', 'been on', 'prescribed', 'started on', 'switched to', 'put me on', 'on'],
  dosage: ['dose', 'dosage'],
  text: [],
};

/** Guesses a string field's kind from its name and description. */
export function stringKind(f: FieldDef): StringKind {
  const name = f.name.toLowerCase();
  const desc = f.description.toLowerCase();
  const both = `${name.replace(/_/g, ' ')} ${desc}`;
  if (/e-?mail/.test(both)) return 'email';
  if (/phone|mobile|whatsapp|contact number|callback number/.test(both)) return 'phone';
  if (/name/.test(name)) {
    const owner = name.replace(/_?(full|first|last|given|family)?_?name$/, '');
    if (owner === '' || /^(caller|user|customer|patient|tenant|client|applicant|lead|buyer)$/.test(owner)) return 'self-name';
    return 'person-name';
  }
  if (/address/.test(both)) return 'address';
  if (/dosage|\bdose\b/.test(both)) return 'dosage';
  if (/medication|medicine|\bdrug|prescription/.test(both)) return 'medication';
  if (/employer|company|workplace|where .* works/.test(both)) return 'employer';
  if (/occupation|profession|job title|designation|\bjob\b|\brole\b/.test(both)) return 'occupation';
  if (/location|\barea\b|neighbou?rhood|locality|\bcity\b|\btown\b|where .* (live|lives|based|buy|rent|move)|\bregion\b/.test(both)) return 'place';
  return 'text';
}

function nameCues(f: FieldDef): string[] {
  const words = f.name
    .toLowerCase()
    .split(/_+/)
    .filter((w) => w && !GENERIC_NAME_WORDS.has(w) && w !== 'name' && w !== 'has' && w !== 'is');
  const phrase = f.name
    .toLowerCase()
    .replace(/_+/g, ' ')
    .replace(/^(has|is|current|preferred)\s+/, '');
  return [...new Set([phrase, ...words].filter((w) => w.length >= 3))];
}

function descCues(f: FieldDef): string[] {
  return f.description
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter(
      (w) =>
        w.length >= 4 && !GENERIC_NAME_WORDS.has(w) && !/^(with|from|that|this|what|when|which|will|would|should|about|into|they|them|wants|needs|takes|report|reports|scale|reason|during)$/.test(w),
    );
}

// Synonyms too common in other senses to signal a status inside free speech ("let me check").
const AMBIGUOUS_SYNONYMS = new Set(['clear', 'check', 'fix', 'like', 'process', 'file', 'drop', 'pass', 'review', 'confirm', 'put in', 'accept', 'grant']);

const cache = new WeakMap<ExtractionSchema, CompiledField[]>();

/** Compiles every field's cues (hints strong, name words strong, built-ins, description words weak); cached per schema. */
export function compileSchema(schema: ExtractionSchema): CompiledField[] {
  const hit = cache.get(schema);
  if (hit) return hit;
  const compiled = schema.fields.map((field): CompiledField => {
    const kind = field.type === 'string' ? stringKind(field) : null;
    const cues: Cue[] = [];
    const add = (phrase: string, strength: CueStrength, proper: boolean) => {
      if (phrase.trim()) cues.push({ re: cueRegex(phrase.replace(/^\^/, '')), strength, proper: proper || phrase.startsWith('^') });
    };
    const selfName = kind === 'self-name';
    for (const h of field.hints ?? []) add(h, 'strong', selfName && !/name|call me/i.test(h));
    if (kind) for (const b of BUILTIN[kind]) add(b.replace(/^~/, ''), b.startsWith('~') ? 'weak' : 'strong', b.startsWith('^') || b.startsWith('~'));
    if (!selfName) for (const n of nameCues(field)) add(n, 'strong', kind === 'person-name');
    if (field.type !== 'string') for (const d of descCues(field)) add(d, 'weak', false);
    // Enum values match their exact words (plural allowed): "verify a rental" is not "verified".
    const values = (field.values ?? []).map((value) => {
      const words = value
        .toLowerCase()
        .split(/[\s_-]+/)
        .filter(Boolean);
      const negative = /^(not|no|non|un)$/.test(words[0] ?? '');
      const exact = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s_-]+') + '(?:s|es)?';
      const alts = [
        exact,
        ...enumSynonyms(value)
          .filter((s) => !AMBIGUOUS_SYNONYMS.has(s))
          .map((s) => `${s.replace(/\s+/g, '\\s+')}[a-z]*`),
      ];
      return { value, re: new RegExp(`(?<![a-z])(?:${alts.join('|')})(?![a-z])`, 'gi'), negative };
    });
    return { field, kind, cues, values };
  });
  cache.set(schema, compiled);
  return compiled;
}

/** Every cue occurrence of `cf` in `text` (lower-case comparison), longest first at one position. */
export function findCues(cf: CompiledField, text: string): CueHit[] {
  const hits: CueHit[] = [];
  for (const cue of cf.cues) {
    cue.re.lastIndex = 0;
    for (let m = cue.re.exec(text); m; m = cue.re.exec(text)) {
      hits.push({ start: m.index, end: m.index + m[0].length, strength: cue.strength, proper: cue.proper });
      if (m[0].length === 0) cue.re.lastIndex++;
    }
  }
  hits.sort((a, b) => a.start - b.start || b.end - a.end || (a.strength === 'strong' ? -1 : 1));
  return hits.filter((h, i) => i === 0 || !(hits[i - 1]!.start === h.start));
}
