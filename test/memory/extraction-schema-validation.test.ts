import { describe, expect, it } from 'vitest';
import { MemgateError } from '../../src/core/errors.ts';
import { parseExtractionSchema } from '../../src/memory/extraction-schema-validation.ts';

const good = {
  fields: [
    { name: 'full_name', category: 'profile', type: 'string', description: "The caller's full name" },
    { name: 'budget', category: 'temporal', type: 'money', description: 'Total budget', hints: ['budget', 'approved for'] },
    { name: 'site_visit', category: 'ephemeral', type: 'datetime', description: 'Scheduled site visit', ttlHours: 24 },
    { name: 'property_status', category: 'temporal', type: 'enum', description: 'Status per property', keyBy: 'property_address', values: ['shortlisted', 'visited', 'rejected'] },
  ],
};

function messageOf(input: unknown): string {
  try {
    parseExtractionSchema(input);
  } catch (err) {
    expect(err).toBeInstanceOf(MemgateError);
    expect((err as MemgateError).code).toBe('bad_request');
    return (err as MemgateError).message;
  }
  throw new Error('expected the schema to be refused');
}

function withField(i: number, patch: Record<string, unknown>): unknown {
  const fields = good.fields.map((f) => ({ ...f })) as Record<string, unknown>[];
  fields[i] = { ...fields[i], ...patch };
  for (const [k, v] of Object.entries(patch)) if (v === undefined) delete fields[i]![k];
  return { fields };
}

describe('parseExtractionSchema', () => {
  it('accepts the PROTOCOL example and returns a clean copy', () => {
    const out = parseExtractionSchema(good);
    expect(out).toEqual(good);
    expect(out).not.toBe(good);
  });

  it('names the field whose type is unknown', () => {
    expect(messageOf(withField(2, { type: 'timestamp' }))).toMatch(/^invalid extraction schema: fields\[2\]\.type: /);
  });

  it('refuses names that are not snake_case', () => {
    expect(messageOf(withField(0, { name: 'FullName' }))).toContain('fields[0].name: must be snake_case');
    expect(messageOf(withField(0, { name: 'full-name' }))).toContain('fields[0].name');
  });

  it('refuses duplicate names, pointing at the second one', () => {
    expect(messageOf(withField(1, { name: 'full_name' }))).toContain('fields[1].name: duplicate name "full_name" (also fields[0])');
  });

  it('requires values on an enum, and only there', () => {
    expect(messageOf(withField(3, { values: undefined }))).toContain('fields[3].values: an enum field needs a non-empty list of values');
    expect(messageOf(withField(3, { values: [] }))).toContain('fields[3].values');
    expect(messageOf(withField(1, { values: ['a'] }))).toContain('fields[1].values: only allowed on enum fields');
  });

  it('takes a currency for bare amounts: the schema default goes to money fields without their own', () => {
    const fields = [...good.fields, { name: 'deposit', category: 'temporal', type: 'money', description: 'Deposit', currency: 'usd' }];
    const out = parseExtractionSchema({ currency: 'inr', fields });
    expect(out.currency).toBe('INR');
    expect(out.fields.find((f) => f.name === 'budget')!.currency).toBe('INR');
    expect(out.fields.find((f) => f.name === 'deposit')!.currency).toBe('USD');
    expect(out.fields.find((f) => f.name === 'full_name')!.currency).toBeUndefined();
    expect(messageOf(withField(0, { currency: 'INR' }))).toContain('fields[0].currency: only allowed on money fields (this one is string)');
    expect(messageOf({ ...good, currency: 'rupees' })).toContain('currency: must be a three-letter ISO 4217 code');
  });

  it('allows ttlHours only on ephemeral fields, and only positive', () => {
    expect(messageOf(withField(1, { ttlHours: 12 }))).toContain('fields[1].ttlHours: only meaningful for ephemeral fields (this one is temporal)');
    expect(messageOf(withField(2, { ttlHours: 0 }))).toContain('fields[2].ttlHours: must be positive');
  });

  it('refuses a bad category, an empty keyBy and unknown keys', () => {
    expect(messageOf(withField(0, { category: 'stable' }))).toContain('fields[0].category');
    expect(messageOf(withField(3, { keyBy: '  ' }))).toContain('fields[3].keyBy: must not be empty');
    expect(messageOf(withField(2, { ttl_hours: 5 }))).toMatch(/fields\[2\]: .*ttl_hours/);
  });

  it('refuses input that is not a schema at all', () => {
    expect(messageOf(null)).toMatch(/^invalid extraction schema: schema: /);
    expect(messageOf({ fields: [] })).toContain('fields: must declare at least one field');
    expect(messageOf({ fields: 'budget' })).toContain('fields: ');
  });

  it('reports several problems at once', () => {
    const msg = messageOf({ fields: [{ name: 'A', category: 'x', type: 'string', description: 'd' }] });
    expect(msg).toContain('fields[0].name');
    expect(msg).toContain('fields[0].category');
  });
});
