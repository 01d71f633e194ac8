import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { answerTokens, normalizeAnswer, pyRound3, scoreQuestion } from '../../bench/locomo/f1.ts';
import { porterStem } from '../../bench/locomo/porter-stemmer.ts';

// The golden vectors live beside the LoCoMo data, outside the repository (licence: never copied in).
const GOLDEN = resolve(dirname(fileURLToPath(import.meta.url)), '../../../shared/data/locomo/f1-golden.json');

interface Golden {
  normalize: Array<{ input: string; normalized: string; tokens: string[] }>;
  stem: Array<[string, string]>;
  score: Array<{ sample_id: string | null; qa_index: number | null; category: number; gold: string | number | null; prediction: string; score: number; score_rounded3: number }>;
}

const present = existsSync(GOLDEN);
if (!present) process.stderr.write(`SKIPPED: LoCoMo scorer port validation (${GOLDEN} not found; it ships in ../shared/data/locomo)\n`);

describe.skipIf(!present)(`LoCoMo F1 scorer port against f1-golden.json${present ? '' : ' (skipped: ../shared/data/locomo/f1-golden.json not found)'}`, () => {
  const golden = (present ? JSON.parse(readFileSync(GOLDEN, 'utf8')) : { normalize: [], stem: [], score: [] }) as Golden;

  it('stems every dev token exactly as NLTK 3.8 PorterStemmer (NLTK_EXTENSIONS)', () => {
    expect(golden.stem.length).toBeGreaterThan(1000);
    const wrong = golden.stem.filter(([token, stem]) => porterStem(token) !== stem).map(([token, stem]) => `${token}: want ${stem}, got ${porterStem(token)}`);
    expect(wrong).toEqual([]);
  });

  it('normalizes and tokenizes answers exactly as normalize_answer + stem', () => {
    const wrong = golden.normalize
      .filter((n) => normalizeAnswer(n.input) !== n.normalized || JSON.stringify(answerTokens(n.input)) !== JSON.stringify(n.tokens))
      .map((n) => `${JSON.stringify(n.input)} → ${JSON.stringify(normalizeAnswer(n.input))} ${JSON.stringify(answerTokens(n.input))}`);
    expect(wrong).toEqual([]);
  });

  it('scores every golden prediction like eval_question_answering (unrounded and round(x, 3))', () => {
    expect(golden.score.length).toBeGreaterThan(3000);
    const wrong = golden.score
      .filter((s) => {
        const got = scoreQuestion(s.category, s.gold, s.prediction);
        return Math.abs(got - s.score) > 1e-12 || pyRound3(got) !== s.score_rounded3;
      })
      .map(
        (s) =>
          `${s.sample_id}#${s.qa_index} cat${s.category} gold=${JSON.stringify(s.gold)} pred=${JSON.stringify(s.prediction)} want ${s.score} got ${scoreQuestion(s.category, s.gold, s.prediction)}`,
      );
    expect(wrong).toEqual([]);
  });
});

describe('LoCoMo scorer details that the golden file does not pin', () => {
  it('rounds exact ties to even like Python round(x, 3)', () => {
    expect(pyRound3(0.0625)).toBe(0.062);
    expect(pyRound3(0.1875)).toBe(0.188);
    expect(pyRound3(2 / 3)).toBe(0.667);
    expect(pyRound3(1)).toBe(1);
  });

  it('stems words with characters outside the BMP by code point, as Python does', () => {
    expect(porterStem('😀s')).toBe('😀s');
    expect(porterStem('cats😀')).toBe('cats😀');
    expect(porterStem('happies')).toBe('happi');
  });

  it('scores category 5 by the "not mentioned" check and ignores the gold', () => {
    expect(scoreQuestion(5, null, 'That is not mentioned anywhere')).toBe(1);
    expect(scoreQuestion(5, 'Paris', 'Paris')).toBe(0);
  });
});
