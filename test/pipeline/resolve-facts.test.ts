import { describe, expect, it } from 'vitest';
import type { ExtractionSchema } from '../../src/core/extraction-schema.ts';
import type { Turn } from '../../src/core/types.ts';
import { resolveFacts } from '../../src/pipeline/resolve-facts.ts';

const schema: ExtractionSchema = {
  fields: [{ name: 'expected_rent', category: 'temporal', type: 'money', description: 'Rent per property', keyBy: 'property_address' }],
};
const turn: Turn = { turnId: 't1', seq: 1, sessionId: 's', role: 'user', text: 'The rent is 40 thousand.', ts: Date.parse('2026-01-05T10:00:00Z'), receivedAt: 0, tokens: 5 };

describe('resolveFacts: keyed fields', () => {
  it('a keyed value with its qualifier gets field:qualifier; one without keeps the bare field key instead of being dropped', () => {
    const facts = resolveFacts(
      [
        { field: 'expected_rent', qualifier: '12 MG Road', value: { amount: 30_000, currency: 'INR' }, source: 'explicit', evidence: ['t1'] },
        { field: 'expected_rent', value: { amount: 40_000, currency: 'INR' }, source: 'explicit', evidence: ['t1'] },
      ],
      schema,
      [turn],
      { lowAsrConfidence: 0.5 },
    );
    expect(facts.map((f) => f.key)).toEqual(['expected_rent:12 mg road', 'expected_rent']);
  });
});
