import type { Money } from '../core/types.ts';
import { parseDigits, wordsToDigits } from './numbers.ts';

/** A money amount found in text, with its character span in the (digit-normalised) text. */
export interface MoneySpan {
  start: number;
  end: number;
  money: Money;
  /** True when a currency symbol/word or a scale word (lakh, k, million) marks it as money. */
  marked: boolean;
  /** True when the text itself names the currency (a symbol, a word, or lakh/crore). */
  currencyStated: boolean;
}

const PREFIX: Record<string, string> = {
  '₹': 'INR',
  rs: 'INR',
  'rs.': 'INR',
  inr: 'INR',
  $: 'USD',
  us$: 'USD',
  usd: 'USD',
  '€': 'EUR',
  eur: 'EUR',
  '£': 'GBP',
  gbp: 'GBP',
  aed: 'AED',
  sgd: 'SGD',
  cad: 'CAD',
  aud: 'AUD',
};
const SUFFIX: Record<string, string> = {
  rupee: 'INR',
  rupees: 'INR',
  rs: 'INR',
  'rs.': 'INR',
  inr: 'INR',
  dollar: 'USD',
  dollars: 'USD',
  bucks: 'USD',
  usd: 'USD',
  euro: 'EUR',
  euros: 'EUR',
  eur: 'EUR',
  pound: 'GBP',
  pounds: 'GBP',
  sterling: 'GBP',
  quid: 'GBP',
  gbp: 'GBP',
  dirham: 'AED',
  dirhams: 'AED',
  aed: 'AED',
};
const SCALE: Record<string, number> = {
  k: 1e3,
  thousand: 1e3,
  grand: 1e3,
  l: 1e5,
  lakh: 1e5,
  lakhs: 1e5,
  lac: 1e5,
  lacs: 1e5,
  crore: 1e7,
  crores: 1e7,
  cr: 1e7,
  m: 1e6,
  mn: 1e6,
  million: 1e6,
  millions: 1e6,
  b: 1e9,
  bn: 1e9,
  billion: 1e9,
  billions: 1e9,
};
const INDIAN_SCALES = new Set(['l', 'lakh', 'lakhs', 'lac', 'lacs', 'crore', 'crores', 'cr']);

// Single-letter scales ("50L", "$450k", "3.5m") must touch the number: "3 m" is three metres.
const MONEY_RE =
  /(?<pre>₹|\brs\.?|\binr|\bus\$|\$|\busd|€|\beur|£|\bgbp|\baed|\bsgd|\bcad|\baud)?\s*(?<![\d.,])(?<num>\d{1,3}(?:,\d{2,3})+|\d+)(?<dec>\.\d+)?(?:\s*(?<word>thousand|grand|lakhs?|lacs?|crores?|cr|mn|millions?|billions?|bn)|(?<letter>[klmb]))?(?![a-z\d])(?:\s*(?<suf>rupees?|rs\.?|inr|dollars?|bucks|usd|euros?|eur|pounds?|sterling|quid|gbp|dirhams?|aed)(?![a-z]))?/giu;

/** Every money-looking amount in `text` (spoken numbers are turned into digits first). */
export function findMoney(text: string, defaultCurrency = 'USD'): MoneySpan[] {
  const src = wordsToDigits(text);
  const out: MoneySpan[] = [];
  for (const m of src.matchAll(MONEY_RE)) {
    const g = m.groups ?? {};
    const num = g['num'];
    if (num === undefined) continue;
    const scaleWord = (g['word'] ?? g['letter'] ?? '').toLowerCase();
    const pre = g['pre']?.toLowerCase();
    const suf = g['suf']?.toLowerCase();
    const scale = scaleWord ? (SCALE[scaleWord] ?? 1) : 1;
    const amount = Math.round((parseDigits(num) + Number(g['dec'] ?? 0)) * scale * 100) / 100;
    const currency = (pre && PREFIX[pre]) || (suf && SUFFIX[suf]) || (INDIAN_SCALES.has(scaleWord) ? 'INR' : defaultCurrency.toUpperCase());
    if (!Number.isFinite(amount)) continue;
    const start = (m.index ?? 0) + (m[0].length - m[0].trimStart().length);
    const currencyStated = Boolean(pre || suf || INDIAN_SCALES.has(scaleWord));
    out.push({ start, end: (m.index ?? 0) + m[0].length, money: { amount, currency }, marked: Boolean(pre || suf || scaleWord), currencyStated });
  }
  return out;
}

/**
 * The money value a phrase states: the first marked amount ("around 80 lakhs", "$450k"),
 * else the first bare number ("1,800 a month") in `defaultCurrency`. Null when there is none.
 */
export function parseMoney(text: string, defaultCurrency = 'USD'): Money | null {
  const spans = findMoney(text, defaultCurrency);
  return (spans.find((s) => s.marked) ?? spans[0])?.money ?? null;
}

/** A currency named or symbolised anywhere in `text` (a field's description: "rent in INR"), else null. */
export function currencyMentioned(text: string): string | null {
  const m = /(₹|\$|€|£)|\b(inr|usd|eur|gbp|aed|rupees?|dollars?|euros?|pounds?|lakhs?|crores?)\b/i.exec(text);
  if (!m) return null;
  const w = (m[1] ?? m[2] ?? '').toLowerCase();
  if (w.startsWith('lakh') || w.startsWith('crore')) return 'INR';
  return PREFIX[w] ?? SUFFIX[w] ?? null;
}

const SYMBOL: Record<string, string> = { INR: '₹', USD: '$', EUR: '€', GBP: '£' };

/** "8,000,000": Western digit grouping, up to two decimals. */
export function groupDigits(n: number): string {
  const [int, frac] = (Math.round(n * 100) / 100).toFixed(2).split('.') as [string, string];
  const neg = int.startsWith('-');
  const digits = neg ? int.slice(1) : int;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return (neg ? '-' : '') + grouped + (frac === '00' ? '' : `.${frac}`);
}

/** Human form: "₹80 lakh (INR 8,000,000)", "₹1.2 crore (INR 12,000,000)", "$450,000", "3,000 JPY". */
export function formatMoney(m: Money): string {
  const sym = SYMBOL[m.currency];
  if (m.currency === 'INR' && Math.abs(m.amount) >= 1e5) {
    const crore = Math.abs(m.amount) >= 1e7;
    const scaled = Math.round((m.amount / (crore ? 1e7 : 1e5)) * 100) / 100;
    return `₹${scaled} ${crore ? 'crore' : 'lakh'} (INR ${groupDigits(m.amount)})`;
  }
  return sym ? `${sym}${groupDigits(m.amount)}` : `${groupDigits(m.amount)} ${m.currency}`;
}
