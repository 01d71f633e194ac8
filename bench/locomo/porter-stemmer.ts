/**
 * A faithful port of NLTK 3.8's `PorterStemmer` in its default NLTK_EXTENSIONS
 * mode (nltk/stem/porter.py): the LoCoMo scorer stems every answer token with it,
 * so any deviation changes F1. Quirks kept on purpose: the irregular-forms pool,
 * words of length <= 2 left alone, 'ies'/'ied' on 4-letter words, step 1c's
 * consonant rule, the 'alli' and 'logi' extensions, and "first matching suffix
 * wins even when its condition fails". Vowels are ASCII a e i o u only, so any
 * other character (digits, accented letters, ’) counts as a consonant, as in NLTK.
 */

type Condition = ((stem: string) => boolean) | null;
type Rule = [suffix: string, replacement: string, condition: Condition];

const POOL: ReadonlyMap<string, string> = (() => {
  const irregular: Record<string, string[]> = {
    sky: ['sky', 'skies'],
    die: ['dying'],
    lie: ['lying'],
    tie: ['tying'],
    news: ['news'],
    inning: ['innings', 'inning'],
    outing: ['outings', 'outing'],
    canning: ['cannings', 'canning'],
    howe: ['howe'],
    proceed: ['proceed'],
    exceed: ['exceed'],
    succeed: ['succeed'],
  };
  const pool = new Map<string, string>();
  for (const [key, forms] of Object.entries(irregular)) for (const f of forms) pool.set(f, key);
  return pool;
})();

const VOWELS = new Set(['a', 'e', 'i', 'o', 'u']);

function isConsonant(word: string, i: number): boolean {
  const ch = word[i]!;
  if (VOWELS.has(ch)) return false;
  if (ch === 'y') return i === 0 ? true : !isConsonant(word, i - 1);
  return true;
}

/** Porter's m: the number of VC sequences in the stem. */
function measure(stem: string): number {
  let cv = '';
  for (let i = 0; i < stem.length; i++) cv += isConsonant(stem, i) ? 'c' : 'v';
  return cv.split('vc').length - 1;
}

const positiveMeasure = (stem: string) => measure(stem) > 0;

function containsVowel(stem: string): boolean {
  for (let i = 0; i < stem.length; i++) if (!isConsonant(stem, i)) return true;
  return false;
}

function endsDoubleConsonant(word: string): boolean {
  return word.length >= 2 && word[word.length - 1] === word[word.length - 2] && isConsonant(word, word.length - 1);
}

function endsCvc(word: string): boolean {
  const n = word.length;
  return (
    (n >= 3 && isConsonant(word, n - 3) && !isConsonant(word, n - 2) && isConsonant(word, n - 1) && !['w', 'x', 'y'].includes(word[n - 1]!)) ||
    // NLTK extension: a two-letter vowel-consonant word counts as *o.
    (n === 2 && !isConsonant(word, 0) && isConsonant(word, 1))
  );
}

function replaceSuffix(word: string, suffix: string, replacement: string): string {
  return suffix === '' ? word + replacement : word.slice(0, word.length - suffix.length) + replacement;
}

/** The first rule whose suffix matches decides, even when its condition then fails. */
function applyRules(word: string, rules: readonly Rule[]): string {
  for (const [suffix, replacement, condition] of rules) {
    if (suffix === '*d' && endsDoubleConsonant(word)) {
      const stem = word.slice(0, -2);
      return condition === null || condition(stem) ? stem + replacement : word;
    }
    if (word.endsWith(suffix)) {
      const stem = replaceSuffix(word, suffix, '');
      return condition === null || condition(stem) ? stem + replacement : word;
    }
  }
  return word;
}

function step1a(word: string): string {
  if (word.endsWith('ies') && word.length === 4) return replaceSuffix(word, 'ies', 'ie');
  return applyRules(word, [
    ['sses', 'ss', null],
    ['ies', 'i', null],
    ['ss', 'ss', null],
    ['s', '', null],
  ]);
}

function step1b(word: string): string {
  if (word.endsWith('ied')) return word.length === 4 ? replaceSuffix(word, 'ied', 'ie') : replaceSuffix(word, 'ied', 'i');
  if (word.endsWith('eed')) {
    const stem = replaceSuffix(word, 'eed', '');
    return measure(stem) > 0 ? stem + 'ee' : word;
  }
  let intermediate: string | null = null;
  for (const suffix of ['ed', 'ing']) {
    if (word.endsWith(suffix)) {
      const candidate = replaceSuffix(word, suffix, '');
      if (containsVowel(candidate)) {
        intermediate = candidate;
        break;
      }
    }
  }
  if (intermediate === null) return word;
  const last = intermediate[intermediate.length - 1] ?? '';
  return applyRules(intermediate, [
    ['at', 'ate', null],
    ['bl', 'ble', null],
    ['iz', 'ize', null],
    ['*d', last, () => !['l', 's', 'z'].includes(last)],
    ['', 'e', (stem) => measure(stem) === 1 && endsCvc(stem)],
  ]);
}

function step1c(word: string): string {
  return applyRules(word, [['y', 'i', (stem) => stem.length > 1 && isConsonant(stem, stem.length - 1)]]);
}

function step2(word: string): string {
  if (word.endsWith('alli') && positiveMeasure(replaceSuffix(word, 'alli', ''))) return step2(replaceSuffix(word, 'alli', 'al'));
  const m = positiveMeasure;
  return applyRules(word, [
    ['ational', 'ate', m],
    ['tional', 'tion', m],
    ['enci', 'ence', m],
    ['anci', 'ance', m],
    ['izer', 'ize', m],
    ['bli', 'ble', m],
    ['alli', 'al', m],
    ['entli', 'ent', m],
    ['eli', 'e', m],
    ['ousli', 'ous', m],
    ['ization', 'ize', m],
    ['ation', 'ate', m],
    ['ator', 'ate', m],
    ['alism', 'al', m],
    ['iveness', 'ive', m],
    ['fulness', 'ful', m],
    ['ousness', 'ous', m],
    ['aliti', 'al', m],
    ['iviti', 'ive', m],
    ['biliti', 'ble', m],
    ['fulli', 'ful', m],
    // The 'l' of 'logi' stays with the stem, so short stems like 'geo' work.
    ['logi', 'log', () => positiveMeasure(word.slice(0, -3))],
  ]);
}

function step3(word: string): string {
  const m = positiveMeasure;
  return applyRules(word, [
    ['icate', 'ic', m],
    ['ative', '', m],
    ['alize', 'al', m],
    ['iciti', 'ic', m],
    ['ical', 'ic', m],
    ['ful', '', m],
    ['ness', '', m],
  ]);
}

function step4(word: string): string {
  const gt1 = (stem: string) => measure(stem) > 1;
  return applyRules(word, [
    ['al', '', gt1],
    ['ance', '', gt1],
    ['ence', '', gt1],
    ['er', '', gt1],
    ['ic', '', gt1],
    ['able', '', gt1],
    ['ible', '', gt1],
    ['ant', '', gt1],
    ['ement', '', gt1],
    ['ment', '', gt1],
    ['ent', '', gt1],
    ['ion', '', (stem) => measure(stem) > 1 && (stem.endsWith('s') || stem.endsWith('t'))],
    ['ou', '', gt1],
    ['ism', '', gt1],
    ['ate', '', gt1],
    ['iti', '', gt1],
    ['ous', '', gt1],
    ['ive', '', gt1],
    ['ize', '', gt1],
  ]);
}

function step5a(word: string): string {
  if (word.endsWith('e')) {
    const stem = replaceSuffix(word, 'e', '');
    if (measure(stem) > 1) return stem;
    if (measure(stem) === 1 && !endsCvc(stem)) return stem;
  }
  return word;
}

function step5b(word: string): string {
  return applyRules(word, [['ll', 'l', () => measure(word.slice(0, -1)) > 1]]);
}

/**
 * NLTK `PorterStemmer().stem(word)` (lower-cases first, like NLTK's default).
 * Python indexes strings by code point and JS by UTF-16 unit, so characters outside
 * the BMP are swapped for private-use stand-ins (distinct, consonants either way) and back.
 */
export function porterStem(word: string): string {
  if (!/[\uD800-\uDFFF]/.test(word)) return stemBmp(word);
  const toStandIn = new Map<string, string>();
  const fromStandIn = new Map<string, string>();
  const mapped = Array.from(word, (ch) => {
    if (ch.length === 1) return ch;
    let standIn = toStandIn.get(ch);
    if (standIn === undefined) {
      standIn = String.fromCharCode(0xe000 + toStandIn.size);
      toStandIn.set(ch, standIn);
      fromStandIn.set(standIn, ch);
    }
    return standIn;
  }).join('');
  return Array.from(stemBmp(mapped), (ch) => fromStandIn.get(ch) ?? ch).join('');
}

function stemBmp(word: string): string {
  const lower = word.toLowerCase();
  const pooled = POOL.get(word);
  if (pooled !== undefined) return pooled;
  if (word.length <= 2) return lower;
  let s = step1a(lower);
  s = step1b(s);
  s = step1c(s);
  s = step2(s);
  s = step3(s);
  s = step4(s);
  s = step5a(s);
  s = step5b(s);
  return s;
}
