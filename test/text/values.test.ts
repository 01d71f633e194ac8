import { describe, expect, it } from 'vitest';
import type { FieldDef, FieldType } from '../../src/core/extraction-schema.ts';
import { findDates, resolveDate, rewriteDates } from '../../src/text/dates.ts';
import { wordsToDigits } from '../../src/text/numbers.ts';
import { formatValue, matchEnum, normalizeValue, valuesEqual } from '../../src/text/values.ts';

// Thursday 2026-01-15, 10:00 UTC: the instant the turn was said.
const REF = Date.parse('2026-01-15T10:00:00Z');
const field = (type: FieldType, extra: Partial<FieldDef> = {}): FieldDef => ({ name: 'f', category: 'temporal', type, description: 'a field', ...extra });

describe('normalizeValue: money', () => {
  const money = field('money', { description: 'Total budget for the purchase' });
  it.each([
    ['₹50 lakhs', 5_000_000, 'INR'],
    ['50L', 5_000_000, 'INR'],
    ['80 lakh', 8_000_000, 'INR'],
    ['eighty lakhs', 8_000_000, 'INR'],
    ['1.2 crore', 12_000_000, 'INR'],
    ['one and a half crore', 15_000_000, 'INR'],
    ['Rs. 50,00,000', 5_000_000, 'INR'],
    ['$450k', 450_000, 'USD'],
    ['450,000 dollars', 450_000, 'USD'],
    ['four hundred and fifty thousand dollars', 450_000, 'USD'],
    ['half a million dollars', 500_000, 'USD'],
    ['2500 rupees', 2_500, 'INR'],
    ['€3.5m', 3_500_000, 'EUR'],
    ['£2,000 per month', 2_000, 'GBP'],
    ['1,800 a month', 1_800, 'USD'],
    ['approved for 80 lakhs', 8_000_000, 'INR'],
    ['somewhere between 70 and 80 lakhs', 8_000_000, 'INR'],
    // A scale word after digits scales them ("40 thousand" was read as 40 and 1,000).
    ['Around 40 thousand rupees.', 40_000, 'INR'],
    ['forty thousand rupees', 40_000, 'INR'],
    ['about 2.5 thousand dollars', 2_500, 'USD'],
    ['roughly 45,000 rupees', 45_000, 'INR'],
    ['approximately 60k', 60_000, 'USD'],
    ['fifty lakh', 5_000_000, 'INR'],
    ['12 lacs', 1_200_000, 'INR'],
    ['1.2 crore', 12_000_000, 'INR'],
    ['2 million dollars', 2_000_000, 'USD'],
  ])('%s → %d %s', (raw, amount, currency) => {
    expect(normalizeValue(money, raw, REF)).toEqual({ amount, currency });
  });

  it('takes the default currency of a bare amount from the field description', () => {
    const rent = field('money', { description: 'Monthly rent in INR' });
    expect(normalizeValue(rent, '25,000 a month', REF)).toEqual({ amount: 25_000, currency: 'INR' });
  });

  it('accepts money objects, numbers and model output with a string amount', () => {
    expect(normalizeValue(money, { amount: 8_000_000, currency: 'inr' }, REF)).toEqual({ amount: 8_000_000, currency: 'INR' });
    expect(normalizeValue(money, 1200, REF)).toEqual({ amount: 1200, currency: 'USD' });
    expect(normalizeValue(money, { amount: '8000000', currency: 'INR' } as unknown as number, REF)).toEqual({ amount: 8_000_000, currency: 'INR' });
  });

  it('returns null when there is no amount', () => {
    expect(normalizeValue(money, 'no idea yet', REF)).toBeNull();
    expect(normalizeValue(money, true, REF)).toBeNull();
  });
});

describe('normalizeValue: number, boolean, enum, string', () => {
  it.each([
    ['three', 3],
    ['3BHK', 3],
    ['a 3 bedroom flat', 3],
    ['twenty-five', 25],
    ['2.5', 2.5],
    ['a dozen', 12],
    ['50k', 50_000],
    ['seven out of ten', 7],
  ])('number %s → %d', (raw, n) => {
    expect(normalizeValue(field('number'), raw, REF)).toBe(n);
  });

  it('number: null without digits or number words', () => {
    expect(normalizeValue(field('number'), 'none at all', REF)).toBeNull();
  });

  it.each([
    ['yes', true],
    ['No', false],
    ['true', true],
    ['we have a dog', true],
    ["I don't smoke", false],
    ['she doesn’t', false],
    ['not sure', null],
  ])('boolean %s → %s', (raw, b) => {
    expect(normalizeValue(field('boolean'), raw, REF)).toBe(b);
  });

  it('enum: case-, space- and underscore-insensitive, negation-aware, with synonyms', () => {
    const loan = field('enum', { values: ['not_applied', 'applied', 'approved', 'rejected'] });
    expect(normalizeValue(loan, 'APPLIED', REF)).toBe('applied');
    expect(normalizeValue(loan, 'not applied yet', REF)).toBe('not_applied');
    expect(normalizeValue(loan, 'the bank approved my loan', REF)).toBe('approved');
    expect(normalizeValue(loan, 'it got sanctioned', REF)).toBe('approved');
    expect(normalizeValue(loan, 'they declined it', REF)).toBe('rejected');
    expect(normalizeValue(loan, 'pending', REF)).toBeNull();
    expect(matchEnum("we're not interested anymore", ['interested', 'not_interested'])).toBe('not_interested');
    expect(matchEnum('not really interested', ['interested', 'rejected'])).toBeNull();
  });

  it('string: trimmed, whitespace collapsed, empty is null', () => {
    expect(normalizeValue(field('string'), '  Rajiv \n  Kumar ', REF)).toBe('Rajiv Kumar');
    expect(normalizeValue(field('string'), '   ', REF)).toBeNull();
  });
});

describe('dates relative to the turn', () => {
  it.each([
    ['tomorrow', '2026-01-16'],
    ['yesterday', '2026-01-14'],
    ['day after tomorrow', '2026-01-17'],
    ['next Tuesday', '2026-01-20'],
    ['on Friday', '2026-01-16'],
    ['in two weeks', '2026-01-29'],
    ['3 days ago', '2026-01-12'],
    ['last month', '2025-12-01'],
    ['next week', '2026-01-19'],
    ['March 15th', '2026-03-15'],
    ['the first of March', '2026-03-01'],
    ['15/03/2026', '2026-03-15'],
    ['2026-03-01', '2026-03-01'],
    ['since March', '2025-03-01'],
    ['since last Monday', '2026-01-12'],
    ['end of the month', '2026-01-31'],
  ])('date %s → %s', (raw, date) => {
    expect(normalizeValue(field('date'), raw, REF)).toBe(date);
  });

  it.each([
    ['on Friday at 4pm', '2026-01-16T16:00:00.000Z'],
    ['tomorrow at 11am', '2026-01-16T11:00:00.000Z'],
    ['Monday at 5 pm', '2026-01-19T17:00:00.000Z'],
    ['tomorrow morning', '2026-01-16T09:00:00.000Z'],
    ['at 4:30', '2026-01-15T16:30:00.000Z'],
    ['next Thursday at ten in the morning', '2026-01-22T10:00:00.000Z'],
    ['2026-02-01T09:30:00Z', '2026-02-01T09:30:00.000Z'],
  ])('datetime %s → %s', (raw, iso) => {
    expect(normalizeValue(field('datetime'), raw, REF)).toBe(iso);
  });

  it('resolveDate says whether a time was given, and is null without a date', () => {
    expect(resolveDate('next Tuesday', REF)).toEqual({ date: '2026-01-20', hasTime: false, iso: '2026-01-20T00:00:00.000Z' });
    expect(resolveDate('on Friday at 4pm', REF)?.hasTime).toBe(true);
    expect(resolveDate('sometime soon', REF)).toBeNull();
    expect(resolveDate('I may be late', REF)).toBeNull(); // "may" the verb is not May
  });

  it('rewriteDates makes relative expressions absolute and keeps absolute ones', () => {
    expect(rewriteDates('I got approved yesterday', REF)).toBe('I got approved on 2026-01-14');
    expect(rewriteDates('site visit on Friday at 4pm', REF)).toBe('site visit on Friday 2026-01-16 at 4pm');
    expect(rewriteDates('I moved last month', REF)).toBe('I moved in December 2025');
    expect(rewriteDates('since last week', REF)).toBe('since the week of 2026-01-05');
    expect(rewriteDates('born on 12 March 1985', REF)).toBe('born on 12 March 1985');
    expect(findDates('see you tomorrow', REF)[0]).toMatchObject({ text: 'tomorrow', date: '2026-01-16', granularity: 'day' });
  });

  it('turns spoken numbers into digits without touching "the one"', () => {
    expect(wordsToDigits('nine eight four five zero double one two three four')).toBe('9845011234');
    expect(wordsToDigits('the one in Whitefield with three bedrooms')).toBe('the one in Whitefield with 3 bedrooms');
    expect(wordsToDigits('45,000 for the Indiranagar one.')).toBe('45,000 for the Indiranagar one.');
    expect(wordsToDigits('the bigger one and the MG Road one, please')).toBe('the bigger one and the MG Road one, please');
    expect(wordsToDigits('one bedroom and one bathroom')).toBe('1 bedroom and 1 bathroom');
    expect(wordsToDigits('around 40 thousand, or forty five thousand')).toBe('around 40 thousand, or 45000');
  });
});

describe('valuesEqual and formatValue', () => {
  it('compares money by amount and currency, strings without case or spacing', () => {
    expect(valuesEqual({ amount: 8_000_000, currency: 'INR' }, { amount: 8_000_000, currency: 'inr' })).toBe(true);
    expect(valuesEqual({ amount: 8_000_000, currency: 'INR' }, { amount: 8_000_000, currency: 'USD' })).toBe(false);
    expect(valuesEqual({ amount: 5_000_000, currency: 'INR' }, { amount: 8_000_000, currency: 'INR' })).toBe(false);
    expect(valuesEqual('Rajiv  Kumar', 'rajiv kumar')).toBe(true);
    expect(valuesEqual(3, 3)).toBe(true);
    expect(valuesEqual('3', 3)).toBe(false);
    expect(valuesEqual(true, false)).toBe(false);
  });

  it('formats money for people', () => {
    expect(formatValue({ amount: 8_000_000, currency: 'INR' })).toBe('₹80 lakh (INR 8,000,000)');
    expect(formatValue({ amount: 12_000_000, currency: 'INR' })).toBe('₹1.2 crore (INR 12,000,000)');
    expect(formatValue({ amount: 2_500, currency: 'INR' })).toBe('₹2,500');
    expect(formatValue({ amount: 450_000, currency: 'USD' })).toBe('$450,000');
    expect(formatValue({ amount: 3_000, currency: 'JPY' })).toBe('3,000 JPY');
    expect(formatValue(true)).toBe('yes');
    expect(formatValue('2026-01-16')).toBe('2026-01-16');
  });
});
