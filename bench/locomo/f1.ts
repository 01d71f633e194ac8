/**
 * A faithful TypeScript port of the official LoCoMo QA scorer
 * (snap-research/locomo `task_eval/evaluation.py`: normalize_answer, f1_score,
 * f1, and the per-category branch of eval_question_answering), validated
 * against `f1-golden.json` in test/bench/locomo-f1.test.ts. Python semantics
 * that matter are reproduced: `string.punctuation` is ASCII only, the `regex`
 * module's `\b` is Unicode-aware, `str.split()` splits on Unicode whitespace,
 * and `round(x, 3)` rounds exact ties to even.
 */
import { porterStem } from './porter-stemmer.ts';

const ASCII_PUNCTUATION = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');
/** A word character as the `regex` module's `\w` sees it (letters, marks, digits, connectors, joiners). */
const WORD = '[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\u200c\\u200d]';
const ARTICLES = new RegExp(`(?<!${WORD})(?:a|an|the|and)(?!${WORD})`, 'gu');
/** Python's str.isspace() characters (str.split() with no argument). */
const PY_WHITESPACE = /[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u;

/** `normalize_answer`: drop commas, lower-case, strip ASCII punctuation, drop a/an/the/and, squeeze spaces. */
export function normalizeAnswer(s: string): string {
  const noCommas = s.replaceAll(',', '');
  const lower = noCommas.toLowerCase();
  let noPunct = '';
  for (const ch of lower) if (!ASCII_PUNCTUATION.has(ch)) noPunct += ch;
  const noArticles = noPunct.replace(ARTICLES, ' ');
  return pySplit(noArticles).join(' ');
}

/** Python `s.split()`: split on runs of whitespace, no empty strings. */
function pySplit(s: string): string[] {
  return s.split(PY_WHITESPACE).filter((t) => t.length > 0);
}

/** The stemmed tokens f1_score compares. */
export function answerTokens(s: string): string[] {
  return pySplit(normalizeAnswer(s)).map(porterStem);
}

/** `f1_score(prediction, ground_truth)`: token-level F1 of stemmed, normalised tokens (0 when nothing overlaps). */
export function f1Score(prediction: string, groundTruth: string): number {
  const pred = answerTokens(prediction);
  const gold = answerTokens(groundTruth);
  const counts = new Map<string, number>();
  for (const t of gold) counts.set(t, (counts.get(t) ?? 0) + 1);
  let same = 0;
  for (const t of pred) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      same += 1;
      counts.set(t, c - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / pred.length;
  const recall = same / gold.length;
  return (2 * precision * recall) / (precision + recall);
}

/** `f1(prediction, ground_truth)` for multi-hop: comma-split both, best match per gold part, averaged. */
export function f1MultiAnswer(prediction: string, groundTruth: string): number {
  const predictions = prediction.split(',').map((p) => pyStrip(p));
  const truths = groundTruth.split(',').map((g) => pyStrip(g));
  const best = truths.map((gt) => Math.max(...predictions.map((p) => f1Score(p, gt))));
  return best.reduce((a, b) => a + b, 0) / best.length;
}

function pyStrip(s: string): string {
  return s.replace(/^[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/gu, '');
}

/** A LoCoMo gold answer: usually a string, sometimes an integer; absent for most category-5 items. */
export type GoldAnswer = string | number | null | undefined;

/**
 * The score of one question as `eval_question_answering` computes it: categories 2–4
 * plain F1 (category 3 keeps the gold before the first ';'), category 1 multi-answer F1,
 * category 5 1 when the prediction says "no information available" or "not mentioned".
 */
export function scoreQuestion(category: number, gold: GoldAnswer, prediction: string): number {
  if (category === 5) {
    const p = prediction.toLowerCase();
    return p.includes('no information available') || p.includes('not mentioned') ? 1 : 0;
  }
  let answer = String(gold ?? 'None');
  if (category === 3) answer = pyStrip(answer.split(';')[0] ?? '');
  if (category === 2 || category === 3 || category === 4) return f1Score(prediction, answer);
  if (category === 1) return f1MultiAnswer(prediction, answer);
  throw new Error(`unknown LoCoMo category ${category}`);
}

/** Python `round(x, 3)`: the exact decimal value of the double, exact ties to even. */
export function pyRound3(x: number): number {
  const fixed = x.toFixed(30);
  const dot = fixed.indexOf('.');
  const tail = fixed.slice(dot + 4);
  if (/^50*$/.test(tail)) {
    const truncated = Number(fixed.slice(0, dot + 4));
    const lastDigit = Number(fixed[dot + 3]);
    const step = x < 0 ? -0.001 : 0.001;
    return lastDigit % 2 === 0 ? truncated : Number((truncated + step).toFixed(3));
  }
  return Number(x.toFixed(3));
}
