/**
 * Value normalisation by schema type (docs/protocol.md, extraction schema): whatever a model or the
 * offline extractor found ("80 lakhs", "next Tuesday at 4", "yeah we do") becomes one canonical
 * value, so supersession can compare values and the context block can print them.
 * Dates are resolved in UTC against the instant the turn was said (see dates.ts).
 */
import type { FieldDef } from '../core/extraction-schema.ts';
import type { FactValue, Money } from '../core/types.ts';
import { resolveDate, ymd } from './dates.ts';
import { currencyMentioned, formatMoney, parseMoney } from './money.ts';
import { parseDigits, wordsToDigits } from './numbers.ts';
import { stem } from './stem.ts';

export { resolveDate, type ResolvedDate } from './dates.ts';

/** True for a `{amount, currency}` object. */
export function isMoney(v: unknown): v is Money {
  return typeof v === 'object' && v !== null && typeof (v as Money).amount === 'number' && typeof (v as Money).currency === 'string';
}

/** The currency a bare amount of this field is in: its declared one, else one its description or hints name, else USD. */
export function defaultCurrency(field: FieldDef): string {
  return field.currency ?? currencyMentioned([field.description, ...(field.hints ?? [])].join(' ')) ?? 'USD';
}

/**
 * `raw` normalised to `field`'s type, or null when it cannot be (the pipeline drops the fact):
 * money → `{amount, currency}`, number → number, date → `YYYY-MM-DD`, datetime → ISO instant,
 * boolean → boolean, enum → one of `field.values`, string → trimmed with whitespace collapsed.
 * `refTs` (epoch ms the turn was said) anchors relative dates ("tomorrow", "next Tuesday").
 */
export function normalizeValue(field: FieldDef, raw: FactValue, refTs: number): FactValue | null {
  switch (field.type) {
    case 'money':
      return normalizeMoney(raw, defaultCurrency(field));
    case 'number':
      return normalizeNumber(raw);
    case 'date':
    case 'datetime': {
      if (typeof raw === 'number') return Number.isFinite(raw) ? (field.type === 'date' ? ymd(raw) : new Date(raw).toISOString()) : null;
      if (typeof raw !== 'string') return null;
      if (field.type === 'date' && /^\d{4}-\d{2}-\d{2}$/.test(raw.trim())) return Number.isFinite(Date.parse(raw.trim())) ? raw.trim() : null;
      const r = resolveDate(raw, refTs);
      return r === null ? null : field.type === 'date' ? r.date : r.iso;
    }
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      if (typeof raw === 'number') return raw === 1 ? true : raw === 0 ? false : null;
      return typeof raw === 'string' ? parseBoolean(raw) : null;
    case 'enum':
      return typeof raw === 'string' || typeof raw === 'number' ? matchEnum(String(raw), field.values ?? []) : null;
    case 'string': {
      const s = isMoney(raw) ? formatMoney(raw) : String(raw);
      const clean = s
        .replace(/\s+/g, ' ')
        .trim()
        .replace(/^["'“‘]+|["'”’]+$/g, '')
        .replace(/[\s,;:]+$/, '')
        .trim();
      return clean === '' ? null : clean;
    }
    default:
      return null;
  }
}

function normalizeMoney(raw: FactValue, currency: string): Money | null {
  if (isMoney(raw)) {
    const code = /^[A-Za-z]{3}$/.test(raw.currency) ? raw.currency.toUpperCase() : (currencyMentioned(raw.currency) ?? currency);
    return Number.isFinite(raw.amount) && raw.amount >= 0 ? { amount: raw.amount, currency: code } : null;
  }
  if (typeof raw === 'number') return Number.isFinite(raw) && raw >= 0 ? { amount: raw, currency } : null;
  if (typeof raw === 'object' && raw !== null) {
    // Model output may give the amount as a string: {"amount": "8000000", "currency": "INR"}.
    const o = raw as { amount?: unknown; currency?: unknown };
    const amount = typeof o.amount === 'string' ? parseMoney(o.amount, currency)?.amount : undefined;
    return amount === undefined ? null : normalizeMoney({ amount, currency: typeof o.currency === 'string' ? o.currency : currency }, currency);
  }
  return typeof raw === 'string' ? parseMoney(raw, currency) : null;
}

const NUMBER_RE = /(-?\d{1,3}(?:,\d{2,3})+|-?\d+)(\.\d+)?(?:\s*(thousand|lakhs?|lacs?|crores?|million|billion)\b|(k)\b)?/i;
const NUMBER_SCALE: Record<string, number> = { thousand: 1e3, k: 1e3, lakh: 1e5, lac: 1e5, crore: 1e7, million: 1e6, billion: 1e9 };

/** A number from a number, a money amount, or text ("three", "3BHK", "2.5", "50k", "a dozen"). */
export function normalizeNumber(raw: FactValue): number | null {
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : null;
  if (isMoney(raw)) return raw.amount;
  if (typeof raw !== 'string') return null;
  const m = NUMBER_RE.exec(wordsToDigits(raw));
  if (!m) return null;
  const scaleWord = (m[3] ?? m[4] ?? '').toLowerCase().replace(/s$/, '');
  const n = (parseDigits(m[1]!) + Number(m[2] ?? 0) * (m[1]!.startsWith('-') ? -1 : 1)) * (NUMBER_SCALE[scaleWord] ?? 1);
  return Number.isFinite(n) ? n : null;
}

const UNSURE = /\b(not sure|unsure|don'?t know|no idea|maybe|perhaps|not certain|can'?t say)\b/i;
const NEGATIVE = /\b(no|nope|nah|not|never|none|false|neither|nor|without|no longer|quit|stopped|gave up|negative|dont|doesnt|didnt|isnt|wasnt|havent|hasnt|cant|wont|arent)\b|n't\b/i;
const POSITIVE = /\b(yes|yeah|yep|yup|ya|sure|true|correct|right|affirmative|absolutely|definitely|of course|certainly|indeed|has|have|do|does|did|am|is|are|will|yes please)\b/i;

/** yes/no/true/false and first-person polarity ("we have a dog" → true, "I don't smoke" → false). */
export function parseBoolean(text: string): boolean | null {
  const t = text.replace(/[’‘]/g, "'").trim();
  if (/^(true|yes|y|1)$/i.test(t)) return true;
  if (/^(false|no|n|0)$/i.test(t)) return false;
  if (UNSURE.test(t)) return null;
  if (NEGATIVE.test(t)) return false;
  return POSITIVE.test(t) ? true : null;
}

const NEGATORS = new Set(['not', 'no', 'never', 'isnt', 'wasnt', 'arent', 'dont', 'doesnt', 'didnt', 'hasnt', 'havent', 'wont', 'cant', 'nt']);
/** Word stems a caller may use for a one-word enum value ("sanction" for "approved"); empty if none. */
export function enumSynonyms(value: string): readonly string[] {
  const w = words(value);
  return w.length === 1 ? (ENUM_SYNONYMS[stem(w[0]!)] ?? []) : [];
}

// Common status words a caller uses for an enum value's word ("sanctioned" for "approved").
const ENUM_SYNONYMS: Record<string, string[]> = {
  approv: ['sanction', 'accept', 'grant', 'clear', 'pass'],
  reject: ['declin', 'deni', 'deny', 'refus', 'turn down', 'turned down'],
  pend: ['wait', 'process', 'in progress', 'under review', 'review'],
  verifi: ['confirm', 'check', 'validat', 'clear'],
  fail: ['unsuccess', 'bounc'],
  complet: ['done', 'finish'],
  cancel: ['call off', 'called off', 'drop'],
  appli: ['submit', 'file', 'put in'],
  book: ['schedul', 'reserv', 'fix'],
  interest: ['keen', 'like'],
};

const words = (s: string) =>
  s
    .toLowerCase()
    .replace(/['’]/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean);

/**
 * The enum value `raw` names: exact (case-, space- and underscore-insensitive), else a value whose
 * words all occur in `raw` un-negated ("we're not interested" picks `not_interested`, never
 * `interested`), else a value whose status word has a common synonym in `raw`. Null if none.
 */
export function matchEnum(raw: string, values: readonly string[]): string | null {
  const rawWords = words(raw);
  const flat = rawWords.join('');
  const exact = values.find((v) => words(v).join('') === flat);
  if (exact !== undefined) return exact;
  const rawStems = rawWords.map(stem);
  let best: { value: string; size: number } | null = null;
  for (const v of values) {
    const vStems = words(v).map(stem);
    if (vStems.length === 0) continue;
    const first = rawStems.indexOf(vStems[0]!);
    if (first < 0 || !vStems.every((s) => rawStems.includes(s))) continue;
    const negated = !NEGATORS.has(vStems[0]!) && rawStems.slice(Math.max(0, first - 3), first).some((s) => NEGATORS.has(s));
    if (!negated && (best === null || vStems.length > best.size)) best = { value: v, size: vStems.length };
  }
  if (best) return best.value;
  const text = ` ${rawWords.join(' ')} `;
  for (const v of values) {
    const syns = enumSynonyms(v);
    if (syns.some((s) => new RegExp(`\\b${s}`).test(text)) && !/\b(not|never|no)\b/.test(text)) return v;
  }
  return null;
}

const canon = (s: string) =>
  s
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.!?]+$/, '')
    .toLowerCase();

/** Same fact value? Money compares amount and currency; strings ignore case and spacing. */
export function valuesEqual(a: FactValue, b: FactValue): boolean {
  if (isMoney(a) || isMoney(b)) return isMoney(a) && isMoney(b) && a.currency.toUpperCase() === b.currency.toUpperCase() && Math.abs(a.amount - b.amount) < 0.005;
  if (typeof a === 'string' && typeof b === 'string') return canon(a) === canon(b);
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) < 1e-9;
  return a === b;
}

/** Human form for context blocks: "₹80 lakh (INR 8,000,000)", "$450,000", "yes", dates as stored. */
export function formatValue(v: FactValue): string {
  if (isMoney(v)) return formatMoney(v);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  // A normalised datetime reads better to a model and a person without milliseconds and 'T'.
  if (typeof v === 'string' && ISO_DATETIME.test(v)) return v.slice(0, 10) + ' ' + v.slice(11, 16) + ' UTC';
  return String(v);
}

const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z$/;
