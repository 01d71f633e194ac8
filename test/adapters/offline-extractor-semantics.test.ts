/**
 * What the offline extractor emits for the memory-semantics rules (docs/protocol.md, "Memory
 * semantics"): corrections, self-corrections, relative-time changes, spoken amounts, several
 * keyed values in one turn, low-confidence speech and who said what.
 */
import { describe, expect, it } from 'vitest';
import { OfflineExtractor } from '../../src/adapters/offline/offline-extractor.ts';
import type { ExtractionSchema } from '../../src/core/extraction-schema.ts';
import type { Role, Turn } from '../../src/core/types.ts';
import type { ExtractedFact } from '../../src/ports/extractor.ts';

type Line = { role: Role; text: string; at: string; asr?: number };

function call(sessionId: string, lines: Line[]): Turn[] {
  return lines.map((l, i) => ({
    turnId: `${sessionId}-${i}`,
    seq: i + 1,
    sessionId,
    role: l.role,
    text: l.text,
    ts: Date.parse(l.at),
    receivedAt: Date.parse(l.at),
    tokens: Math.ceil(l.text.length / 4),
    ...(l.asr !== undefined ? { asrConfidence: l.asr } : {}),
  }));
}

const x = new OfflineExtractor();
const extract = (schema: ExtractionSchema, turns: Turn[]) => x.extract({ schema, turns, knownProfile: {}, now: Date.parse('2026-04-01T00:00:00Z') });
const only = (facts: ExtractedFact[], field: string) => facts.filter((f) => f.field === field);

const profile: ExtractionSchema = {
  fields: [
    { name: 'full_name', category: 'profile', type: 'string', description: "The caller's full name", hints: ['my name is', 'this is', 'i am'] },
    { name: 'city', category: 'temporal', type: 'string', description: 'City the caller lives in', hints: ['i live in', 'moved to', 'living in', 'based in'] },
    { name: 'date_of_birth', category: 'profile', type: 'date', description: "The caller's date of birth", hints: ['date of birth', 'born on', 'birthday'] },
    { name: 'occupation', category: 'temporal', type: 'string', description: "The caller's job", hints: ['i work as', "i'm a"] },
  ],
};

const realEstate: ExtractionSchema = {
  fields: [
    { name: 'full_name', category: 'profile', type: 'string', description: "The caller's full name", hints: ['my name is'] },
    { name: 'phone', category: 'profile', type: 'string', description: 'Callback phone number', hints: ['my number is', 'call me on', 'phone'] },
    { name: 'budget', category: 'temporal', type: 'money', description: 'Total budget for the purchase', hints: ['budget', 'approved for', 'afford', 'spend'] },
    { name: 'has_pets', category: 'profile', type: 'boolean', description: 'Whether the caller has pets', hints: ['pet', 'dog', 'cat'] },
  ],
};

const rentals: ExtractionSchema = {
  fields: [
    { name: 'offered_rent', category: 'temporal', type: 'money', description: 'Monthly rent the caller offers, in INR', hints: ['rent', 'offer', 'a month'], keyBy: 'property' },
    {
      name: 'viewing_status',
      category: 'temporal',
      type: 'enum',
      values: ['shortlisted', 'rejected'],
      description: 'Where a property stands for the caller',
      hints: ['shortlist', 'reject'],
      keyBy: 'property',
    },
  ],
};

describe('corrections across turns', () => {
  it('"Actually I moved to Mysore last month" after "I live in Chennai": a correction dated one month before the turn', async () => {
    const facts = await extract(
      profile,
      call('c', [
        { role: 'agent', at: '2026-03-10T10:00:00Z', text: 'Where do you live?' },
        { role: 'user', at: '2026-03-10T10:00:05Z', text: 'I live in Chennai.' },
        { role: 'agent', at: '2026-03-10T10:00:10Z', text: 'Lovely city.' },
        { role: 'user', at: '2026-03-10T10:00:20Z', text: 'Actually I moved to Mysore last month.' },
      ]),
    );
    expect(only(facts, 'city')).toEqual([
      { field: 'city', value: 'Chennai', source: 'explicit', evidence: ['c-1'] },
      { field: 'city', value: 'Mysore', source: 'explicit', evidence: ['c-3'], validFrom: '2026-02-10T00:00:00.000Z', correction: true },
    ]);
  });

  it.each([['Correction: my budget is 60 lakhs.'], ["Sorry, it's 60 lakhs, my budget I mean."], ['Actually my budget is 60 lakhs.']])('marks "%s" as a correction', async (text) => {
    const facts = await extract(realEstate, call('k', [{ role: 'user', at: '2026-03-10T10:00:00Z', text }]));
    expect(only(facts, 'budget')).toEqual([{ field: 'budget', value: { amount: 6_000_000, currency: 'INR' }, source: 'explicit', evidence: ['k-0'], correction: true }]);
  });

  it('a value said before the cue in the same sentence is no correction, and a plain "no" answer is none', async () => {
    const facts = await extract(
      realEstate,
      call('n', [
        { role: 'user', at: '2026-03-10T10:00:00Z', text: 'My name is Rajiv Kumar and actually my budget is 60 lakhs.' },
        { role: 'agent', at: '2026-03-10T10:00:05Z', text: 'Do you have any pets?' },
        { role: 'user', at: '2026-03-10T10:00:10Z', text: 'No.' },
      ]),
    );
    expect(facts).toEqual([
      { field: 'full_name', value: 'Rajiv Kumar', source: 'explicit', evidence: ['n-0'] },
      { field: 'budget', value: { amount: 6_000_000, currency: 'INR' }, source: 'explicit', evidence: ['n-0'], correction: true },
      { field: 'has_pets', value: false, source: 'explicit', evidence: ['n-1', 'n-2'] },
    ]);
  });

  it('a fix that names no field ("Sorry, I meant 65 lakhs, not 60") is meant for the one field its value fits, not guessed', async () => {
    const fix = await extract(realEstate, call('f', [{ role: 'user', at: '2026-03-10T10:00:00Z', text: 'Sorry, I meant 65 lakhs, not 60.' }]));
    expect(fix).toEqual([{ field: 'budget', value: { amount: 6_500_000, currency: 'INR' }, source: 'explicit', evidence: ['f-0'], correction: true }]);
    // Without a correction cue the same bare amount stays a guess.
    const bare = await extract(realEstate, call('g', [{ role: 'user', at: '2026-03-10T10:00:00Z', text: 'I was thinking of 65 lakhs.' }]));
    expect(bare.map((f) => [f.field, f.source])).toEqual([['budget', 'inferred']]);
  });

  it('"No, 85 lakhs" to an amount the agent reads back corrects it', async () => {
    const facts = await extract(
      realEstate,
      call('r', [
        { role: 'agent', at: '2026-03-10T10:00:00Z', text: 'So that is 90 lakhs?' },
        { role: 'user', at: '2026-03-10T10:00:05Z', text: 'No, 85 lakhs.' },
      ]),
    );
    expect(facts).toEqual([{ field: 'budget', value: { amount: 8_500_000, currency: 'INR' }, source: 'explicit', evidence: ['r-0', 'r-1'], correction: true }]);
  });
});

describe('self-corrections inside one turn: only the corrected value', () => {
  const at = '2026-03-10T10:00:00Z';

  it('"12 March 1990, sorry, I meant 21 March 1990" yields 21 March only', async () => {
    const facts = await extract(profile, call('d', [{ role: 'user', at, text: 'My date of birth is 12 March 1990, sorry, I meant 21 March 1990.' }]));
    expect(facts).toEqual([{ field: 'date_of_birth', value: '1990-03-21', source: 'explicit', evidence: ['d-0'], correction: true }]);
  });

  it.each([
    ['My budget is not 50 but 60 lakhs.', 6_000_000],
    ['My budget is 50 lakhs, no, 60 lakhs.', 6_000_000],
    ['My budget is 50 lakhs — I mean 60 lakhs.', 6_000_000],
    ['My budget is 50 lakhs, no wait, 55 lakhs.', 5_500_000],
    ["I said my budget was 50 lakhs but it's 60 lakhs.", 6_000_000],
    ['My budget is 70 lakhs, or rather 75 lakhs.', 7_500_000],
  ])('"%s" → %d only', async (text, amount) => {
    const facts = await extract(realEstate, call('s', [{ role: 'user', at, text }]));
    expect(facts).toEqual([{ field: 'budget', value: { amount, currency: 'INR' }, source: 'explicit', evidence: ['s-0'], correction: true }]);
  });

  it('repairs places, names and jobs, and restated clauses, keeping the rest of the turn', async () => {
    const facts = await extract(
      profile,
      call('p', [
        { role: 'user', at, text: 'I live in Pune — I mean Hyderabad.' },
        { role: 'user', at, text: "It's not Chennai but Mysore where I'm based in now." },
        { role: 'user', at, text: 'My name is Rajiv Kumar and I live in Chennai, sorry, I meant I live in Mysore.' },
        { role: 'user', at, text: "I'm a teacher, sorry, I mean a doctor." },
      ]),
    );
    expect(facts.map((f) => [f.field, f.value, f.correction ?? false])).toEqual([
      ['city', 'Hyderabad', true],
      ['full_name', 'Rajiv Kumar', false],
      ['city', 'Mysore', true],
      ['occupation', 'doctor', true],
    ]);
  });

  it('"21 March 1990, not 12 March" keeps the first value; a dose repair keeps the medication', async () => {
    const healthcare: ExtractionSchema = {
      fields: [
        ...profile.fields,
        { name: 'medication', category: 'temporal', type: 'string', description: 'Medication the patient currently takes', hints: ['taking', 'on'] },
        { name: 'dosage', category: 'temporal', type: 'string', description: 'Dose of the current medication', hints: ['mg', 'dose'] },
      ],
    };
    const facts = await extract(
      healthcare,
      call('t', [
        { role: 'user', at, text: 'My date of birth is 21 March 1990, not 12 March.' },
        { role: 'user', at, text: "I'm on metformin 500 mg, sorry, 850 mg." },
      ]),
    );
    expect(facts.map((f) => [f.field, f.value, f.correction ?? false])).toEqual([
      ['date_of_birth', '1990-03-21', true],
      ['medication', 'metformin', false],
      ['dosage', '850 mg', true],
    ]);
  });

  it('leaves lists, hedges, stalls and explanations alone', async () => {
    const facts = await extract(
      realEstate,
      call('l', [
        { role: 'user', at, text: 'I have two kids, no pets.' },
        { role: 'user', at, text: "I'm not sure but maybe 60 lakhs is my budget." },
        { role: 'user', at, text: 'My budget is 70 lakhs, wait, let me check with my wife.' },
      ]),
    );
    expect(facts).toEqual([
      { field: 'has_pets', value: false, source: 'explicit', evidence: ['l-0'] },
      { field: 'budget', value: { amount: 6_000_000, currency: 'INR' }, source: 'inferred', evidence: ['l-1'] },
      { field: 'budget', value: { amount: 7_000_000, currency: 'INR' }, source: 'explicit', evidence: ['l-2'] },
    ]);
    const places = await extract(
      profile,
      call('w', [
        { role: 'user', at, text: 'I live in Pune, wait, let me think.' },
        { role: 'user', at, text: "I'm based in Whitefield, I mean the area near the tech park." },
      ]),
    );
    expect(places.map((f) => [f.value, f.correction ?? false])).toEqual([
      ['Pune', false],
      ['Whitefield', false],
    ]);
  });
});

describe('relative-time changes set validFrom from the turn', () => {
  it('"I moved to Hyderabad two weeks ago" in a later call yields the city, two weeks before the turn', async () => {
    const facts = await extract(profile, [
      ...call('a', [{ role: 'user', at: '2026-01-05T10:00:00Z', text: "I'm based in Pune." }]),
      ...call('b', [{ role: 'user', at: '2026-03-10T10:00:00Z', text: 'I moved to Hyderabad two weeks ago.' }]),
    ]);
    expect(facts).toEqual([
      { field: 'city', value: 'Pune', source: 'explicit', evidence: ['a-0'] },
      { field: 'city', value: 'Hyderabad', source: 'explicit', evidence: ['b-0'], validFrom: '2026-02-24T00:00:00.000Z' },
    ]);
  });

  it.each([
    ['I moved to Goa 3 days back.', 'Goa', '2026-03-07'],
    ["I've been living in Delhi since Monday.", 'Delhi', '2026-03-09'],
    ['I moved to Jaipur a year ago.', 'Jaipur', '2025-03-10'],
    ['We moved to Kochi last week.', 'Kochi', '2026-03-03'],
    ['I moved to Indore a couple of months ago.', 'Indore', '2026-01-10'],
    ["I've been living in Mysore for two months.", 'Mysore', '2026-01-10'],
    ['We have been based in Pune for a couple of years now.', 'Pune', '2024-03-10'],
    ['Since last week I live in Wakad instead.', 'Wakad', '2026-03-03'],
    ['We moved to Nashik last month instead of Pune.', 'Nashik', '2026-02-10'],
  ])('"%s" (said Tuesday 2026-03-10)', async (text, city, day) => {
    const facts = await extract(profile, call('t', [{ role: 'user', at: '2026-03-10T10:00:00Z', text }]));
    expect(facts).toEqual([{ field: 'city', value: city, source: 'explicit', evidence: ['t-0'], validFrom: `${day}T00:00:00.000Z` }]);
  });
});

describe('a change named with "from … to …"', () => {
  it('"My budget went up from 50 lakhs to 80 lakhs" keeps the new value only; a range without a change verb keeps its first value', async () => {
    const change = await extract(realEstate, call('c', [{ role: 'user', at: '2026-03-10T10:00:00Z', text: 'My budget went up from 50 lakhs to 80 lakhs.' }]));
    expect(change).toEqual([{ field: 'budget', value: { amount: 8_000_000, currency: 'INR' }, source: 'explicit', evidence: ['c-0'] }]);
    const cut = await extract(realEstate, call('d', [{ role: 'user', at: '2026-03-10T10:00:00Z', text: 'We reduced the budget from 90 lakhs to about 75 lakhs.' }]));
    expect(cut.map((f) => f.value)).toEqual([{ amount: 7_500_000, currency: 'INR' }]);
    const range = await extract(realEstate, call('e', [{ role: 'user', at: '2026-03-10T10:00:00Z', text: 'My budget is from 50 lakhs to 80 lakhs.' }]));
    expect(range.map((f) => f.value)).toEqual([{ amount: 5_000_000, currency: 'INR' }]);
  });
});

describe('spoken and written amounts', () => {
  it('"Around 40 thousand rupees." answering the budget question is ₹40,000, explicit (a hedge on the amount is no hedge on the fact)', async () => {
    const facts = await extract(
      realEstate,
      call('m', [
        { role: 'agent', at: '2026-03-10T10:00:00Z', text: 'What budget do you have in mind?' },
        { role: 'user', at: '2026-03-10T10:00:05Z', text: 'Around 40 thousand rupees.' },
      ]),
    );
    expect(facts).toEqual([{ field: 'budget', value: { amount: 40_000, currency: 'INR' }, source: 'explicit', evidence: ['m-0', 'm-1'] }]);
  });

  it.each([
    ['My budget is about 45,000 rupees.', 45_000, 'explicit'],
    ['My budget is roughly 1.2 crore.', 12_000_000, 'explicit'],
    ['My budget is fifty lakh.', 5_000_000, 'explicit'],
    ['My budget is approximately forty thousand rupees.', 40_000, 'explicit'],
    ['I can spend 90k dollars.', 90_000, 'explicit'],
    ['My budget is 2 million dollars.', 2_000_000, 'explicit'],
    ['I think maybe 60 lakhs is my budget.', 6_000_000, 'inferred'],
  ])('"%s" → %d (%s)', async (text, amount, source) => {
    const facts = await extract(realEstate, call('a', [{ role: 'user', at: '2026-03-10T10:00:00Z', text }]));
    expect(facts.map((f) => [f.field, (f.value as { amount: number }).amount, f.source])).toEqual([['budget', amount, source]]);
  });
});

describe('several keyed values in one turn', () => {
  it('"30,000 for the MG Road flat and 45,000 for the Indiranagar flat" → two entities', async () => {
    const facts = await extract(
      rentals,
      call('k', [
        { role: 'agent', at: '2026-03-10T10:00:00Z', text: 'What rent would you offer?' },
        { role: 'user', at: '2026-03-10T10:00:05Z', text: 'I can offer 30,000 for the MG Road flat and 45,000 for the Indiranagar one.' },
      ]),
    );
    expect(facts).toEqual([
      { field: 'offered_rent', value: { amount: 30_000, currency: 'INR' }, source: 'explicit', evidence: ['k-1'], qualifier: 'MG Road' },
      { field: 'offered_rent', value: { amount: 45_000, currency: 'INR' }, source: 'explicit', evidence: ['k-1'], qualifier: 'Indiranagar' },
    ]);
  });

  it('pairs each value with the qualifier of its own part, whichever comes first, for enums too', async () => {
    const facts = await extract(
      rentals,
      call('e', [
        { role: 'user', at: '2026-03-10T10:00:00Z', text: "For the Brigade flat my rent offer is 28,000, and for the Sobha flat it's 32,000." },
        { role: 'user', at: '2026-03-10T10:00:05Z', text: 'I shortlisted the Brigade flat and rejected the Sobha flat.' },
      ]),
    );
    expect(facts.map((f) => [f.field, f.value, f.qualifier])).toEqual([
      ['offered_rent', { amount: 28_000, currency: 'INR' }, 'Brigade'],
      ['offered_rent', { amount: 32_000, currency: 'INR' }, 'Sobha'],
      ['viewing_status', 'shortlisted', 'Brigade'],
      ['viewing_status', 'rejected', 'Sobha'],
    ]);
  });

  it('answers to "what would you offer for each?" pair each amount with the property named before it', async () => {
    const facts = await extract(
      rentals,
      call('a', [
        { role: 'agent', at: '2026-03-10T10:00:00Z', text: 'What rent would you offer for each?' },
        { role: 'user', at: '2026-03-10T10:00:05Z', text: 'The MG Road flat is 30,000 and the Indiranagar flat is 45,000.' },
        { role: 'user', at: '2026-03-10T10:00:10Z', text: "For Koramangala I'd offer a rent of 38,000, for HSR Layout 41,000." },
      ]),
    );
    expect(facts.map((f) => [(f.value as { amount: number }).amount, f.qualifier])).toEqual([
      [30_000, 'MG Road'],
      [45_000, 'Indiranagar'],
      [38_000, 'Koramangala'],
      [41_000, 'HSR Layout'],
    ]);
  });

  it('"the flat at MG Road" names a property as "the MG Road flat" does, also when keyBy is a schema field', async () => {
    const byAddress: ExtractionSchema = {
      fields: [
        { name: 'property_address', category: 'temporal', type: 'string', description: 'Address of the property', hints: ['flat at', 'address is'] },
        { name: 'status', category: 'temporal', type: 'enum', values: ['verified', 'pending'], description: 'Verification status', hints: ['verified', 'pending'], keyBy: 'property_address' },
      ],
    };
    const text = 'The flat at MG Road is verified and the flat at Indiranagar is still pending.';
    const keyed = await extract(byAddress, call('h', [{ role: 'user', at: '2026-03-10T10:00:00Z', text }]));
    expect(only(keyed, 'status').map((f) => [f.value, f.qualifier])).toEqual([
      ['verified', 'MG Road'],
      ['pending', 'Indiranagar'],
    ]);
    const free = await extract(rentals, call('i', [{ role: 'user', at: '2026-03-10T10:00:00Z', text: 'The rent is 30,000 rupees for the flat at MG Road.' }]));
    expect(free.map((f) => [f.value, f.qualifier])).toEqual([[{ amount: 30_000, currency: 'INR' }, 'MG Road']]);
    // "I work at Infosys" names no property.
    const work = await extract(byAddress, call('j', [{ role: 'user', at: '2026-03-10T10:00:00Z', text: 'I work at Infosys and my flat is verified.' }]));
    expect(only(work, 'status').map((f) => f.qualifier)).toEqual([undefined]);
  });

  it('a range for one property stays one fact', async () => {
    const facts = await extract(rentals, call('g', [{ role: 'user', at: '2026-03-10T10:00:00Z', text: 'My rent offer is between 30,000 and 35,000 for the MG Road flat.' }]));
    expect(facts.map((f) => [f.value, f.qualifier])).toEqual([[{ amount: 30_000, currency: 'INR' }, 'MG Road']]);
  });
});

describe('confidence and speakers', () => {
  it('a misheard turn is never confirmed: its own values and a read-back it seems to accept are inferred', async () => {
    const facts = await extract(
      realEstate,
      call('h', [
        { role: 'user', at: '2026-03-10T10:00:00Z', text: 'My budget is 18 lakhs.', asr: 0.35 },
        { role: 'agent', at: '2026-03-10T10:00:05Z', text: 'So your budget is 80 lakhs?' },
        { role: 'user', at: '2026-03-10T10:00:10Z', text: 'Yes.', asr: 0.35 },
      ]),
    );
    expect(facts).toEqual([
      { field: 'budget', value: { amount: 1_800_000, currency: 'INR' }, source: 'inferred', evidence: ['h-0'] },
      { field: 'budget', value: { amount: 8_000_000, currency: 'INR' }, source: 'inferred', evidence: ['h-1', 'h-2'] },
    ]);
  });

  it('never stores the agent\'s own number or name as the caller\'s, even after a polite "sure"', async () => {
    const facts = await extract(
      realEstate,
      call('o', [
        { role: 'agent', at: '2026-03-10T10:00:00Z', text: 'You can reach me on 080 4123 4567, that is my office number.' },
        { role: 'user', at: '2026-03-10T10:00:05Z', text: 'Sure, thanks.' },
        { role: 'agent', at: '2026-03-10T10:00:10Z', text: 'My name is Asha, by the way.' },
        { role: 'user', at: '2026-03-10T10:00:15Z', text: 'Okay.' },
      ]),
    );
    expect(facts).toEqual([]);
  });

  it('a value the agent reads back and the caller confirms is confirmed', async () => {
    const facts = await extract(
      realEstate,
      call('b', [
        { role: 'agent', at: '2026-03-10T10:00:00Z', text: 'Let me read back your number: 98450 12345, correct?' },
        { role: 'user', at: '2026-03-10T10:00:05Z', text: 'Yes.' },
        { role: 'agent', at: '2026-03-10T10:00:10Z', text: 'And your budget is 80 lakhs, right?' },
        { role: 'user', at: '2026-03-10T10:00:15Z', text: "That's right." },
      ]),
    );
    expect(facts).toEqual([
      { field: 'phone', value: '9845012345', source: 'confirmed', evidence: ['b-0', 'b-1'] },
      { field: 'budget', value: { amount: 8_000_000, currency: 'INR' }, source: 'confirmed', evidence: ['b-2', 'b-3'] },
    ]);
  });
});
