import type { ExtractionSchema, FieldDef } from '../../core/extraction-schema.ts';
import type { FactValue } from '../../core/types.ts';

const ADDRESS_RE =
  /\b(?:(?:flat|apt|apartment|unit|house|plot|door)\s*(?:no\.?|number|#)?\s*)?\d+[A-Za-z]?(?:\/\d+)?,?\s+(?:[A-Z][\w.'-]*\s+){0,4}(?:Road|Rd|Street|St|Lane|Ln|Avenue|Ave|Nagar|Layout|Colony|Main|Cross|Block|Sector|Phase|Towers?|Apartments?|Residency|Heights|Enclave|Park|Gardens?|Drive|Boulevard|Place|Court|Way)\b(?:,\s+[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)?/g;
const NAMED_RE = /\b(?:[Tt]he\s+)?((?:[A-Z][\w'-]*\s+){0,3}[A-Z][\w'-]*)\s+(?:property|flat|apartment|project|house|villa|unit|one|place|site)\b/g;
// "the flat at MG Road", "the villa in Whitefield": a property noun, then where it is.
const NOUN_AT_RE = /\b(?:property|flat|apartment|house|villa|unit|place|site|plot|project)\s+(?:at|in|on|near)\s+((?:\d+[A-Za-z]?\s+)?[A-Z][\w'-]*(?:\s+(?!I(?:'\w+)?\b)[A-Z][\w'-]*){0,3})/g;
const PREP_NAMED_RE = /\b(?:[Aa]t|[Ii]n|[Ff]or|[Aa]bout|[Oo]f)\s+((?:[A-Z][\w'-]*)(?:\s+(?!I(?:'\w+)?\b)[A-Z][\w'-]*){0,3})/g;
const NOT_QUALIFIER =
  /^(I|I'm|The|A|An|My|Our|Yes|No|Okay|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|February|March|April|May|June|July|August|September|October|November|December)\b/;

/**
 * A qualifier named in free text when `keyBy` is not itself a schema field: an address
 * ("12 MG Road, Indiranagar"), a named property ("the Brigade Lakefront flat"), or a capitalised
 * place after at/in/for ("for Prestige Lakeside"). Last mention wins.
 */
export function qualifierInText(text: string): string | null {
  for (const re of [ADDRESS_RE, NAMED_RE, NOUN_AT_RE, PREP_NAMED_RE]) {
    re.lastIndex = 0;
    const all = [...text.matchAll(re)].map((m) => (m[1] ?? m[0]).trim()).filter((q) => !NOT_QUALIFIER.test(q));
    const last = all.at(-1);
    if (last) return last.replace(/[,.]+$/, '');
  }
  return null;
}

const squash = (s: string) =>
  s
    .toLowerCase()
    .replace(/^the\s+/, '')
    .replace(/[^a-z0-9]+/g, '');

/** An address or named property in `text` (no bare "at <Capitalised>": "I work at Infosys" names no property), or null. */
function addressInText(text: string): string | null {
  for (const re of [ADDRESS_RE, NAMED_RE, NOUN_AT_RE]) {
    re.lastIndex = 0;
    const last = [...text.matchAll(re)]
      .map((m) => (m[1] ?? m[0]).trim())
      .filter((q) => !NOT_QUALIFIER.test(q))
      .at(-1);
    if (last) return last.replace(/[,.]+$/, '');
  }
  return null;
}

/**
 * A qualifier named in `text`: for a `keyBy` that is a schema field, an address or named
 * property only; for a free `keyBy`, also a capitalised name after at/in/for. Null when none.
 */
export function qualifierIn(text: string, fieldTarget: boolean): string | null {
  return fieldTarget ? addressInText(text) : qualifierInText(text);
}

/**
 * Tracks, turn by turn, the latest value of every `keyBy` target, so a fact keyed by a property
 * gets the property the conversation is about: the same turn first, then earlier turns, then the
 * known profile.
 */
export class QualifierTracker {
  private readonly last = new Map<string, string>();
  private readonly seen = new Map<string, string[]>();
  private readonly fieldNames: Set<string>;

  constructor(
    schema: ExtractionSchema,
    private readonly knownProfile: Readonly<Record<string, FactValue>>,
  ) {
    this.fieldNames = new Set(schema.fields.map((f) => f.name));
  }

  /** keyBy targets that are schema fields (their extracted values are the qualifiers). */
  isFieldTarget(keyBy: string): boolean {
    return this.fieldNames.has(keyBy);
  }

  /**
   * Qualifier for a fact of `field` said in a turn with `text`, given that turn's own values of
   * other fields. `scoped`: `text` is the part of a clause that names this value's own qualifier
   * (one of several values in a turn), so the turn's value of the keyBy field does not apply.
   */
  resolve(field: FieldDef, text: string, sameTurn: ReadonlyMap<string, FactValue>, scoped = false): string | undefined {
    const k = field.keyBy;
    if (!k) return undefined;
    if (this.isFieldTarget(k)) {
      const here = (scoped ? undefined : sameTurn.get(k)) ?? addressInText(text);
      if (typeof here === 'string') return this.canonical(k, here);
      const known = this.knownProfile[k];
      return this.last.get(k) ?? (typeof known === 'string' ? known : undefined);
    }
    const here = qualifierInText(text);
    return here ? this.canonical(k, here) : this.last.get(k);
  }

  /** The qualifier `text` itself names for `field` (no fallback to other turns), canonical spelling. */
  named(field: FieldDef, text: string): string | undefined {
    const k = field.keyBy;
    const here = k ? qualifierIn(text, this.isFieldTarget(k)) : null;
    return k && here ? this.canonical(k, here) : undefined;
  }

  /** Remembers what a turn said about each keyBy target (field values, or free-text qualifiers). */
  observe(keyBys: readonly string[], text: string, values: ReadonlyMap<string, FactValue>): void {
    for (const k of keyBys) {
      const v = this.isFieldTarget(k) ? (values.get(k) ?? addressInText(text)) : qualifierInText(text);
      if (typeof v === 'string' && v) this.last.set(k, this.remember(k, v));
    }
  }

  /** The first-seen spelling of a qualifier: "12 MG Road" after "12 MG Road, Indiranagar" is the same property. */
  private canonical(k: string, v: string): string {
    const key = squash(v);
    return this.seen.get(k)?.find((s) => squash(s).startsWith(key) || key.startsWith(squash(s))) ?? v;
  }

  private remember(k: string, v: string): string {
    const c = this.canonical(k, v);
    if (c === v) this.seen.set(k, [...(this.seen.get(k) ?? []), v]);
    return c;
  }
}
