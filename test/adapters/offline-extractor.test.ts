import { describe, expect, it } from 'vitest';
import { OfflineExtractor } from '../../src/adapters/offline/offline-extractor.ts';
import type { ExtractionSchema } from '../../src/core/extraction-schema.ts';
import type { Role, Turn } from '../../src/core/types.ts';
import type { ExtractedFact } from '../../src/ports/extractor.ts';

type Line = { role: Role; text: string; at: string; speaker?: string; asr?: number; interrupted?: boolean };

function turns(prefix: string, lines: Line[]): Turn[] {
  return lines.map((l, i) => ({
    turnId: `${prefix}-${i}`,
    seq: i + 1,
    sessionId: prefix,
    role: l.role,
    text: l.text,
    ts: Date.parse(l.at),
    receivedAt: Date.parse(l.at),
    tokens: Math.ceil(l.text.length / 4),
    ...(l.speaker ? { speaker: l.speaker } : {}),
    ...(l.asr !== undefined ? { asrConfidence: l.asr } : {}),
    ...(l.interrupted ? { interrupted: true } : {}),
  }));
}

const realEstate: ExtractionSchema = {
  fields: [
    { name: 'full_name', category: 'profile', type: 'string', description: "The caller's full name", hints: ['my name is', 'this is', 'i am'] },
    { name: 'budget', category: 'temporal', type: 'money', description: 'Total budget for the purchase', hints: ['budget', 'approved for', 'afford', 'spend'] },
    { name: 'bedrooms', category: 'temporal', type: 'number', description: 'Number of bedrooms wanted (BHK)', hints: ['bhk', 'bedroom'] },
    { name: 'preferred_location', category: 'temporal', type: 'string', description: 'Area the caller wants to buy in', hints: ['looking in', 'near', 'around'] },
    { name: 'loan_status', category: 'temporal', type: 'enum', values: ['not_applied', 'applied', 'approved', 'rejected'], description: 'Status of the home loan', hints: ['loan'] },
    { name: 'has_pets', category: 'profile', type: 'boolean', description: 'Whether the caller has pets', hints: ['pet', 'dog', 'cat'] },
    { name: 'site_visit', category: 'ephemeral', type: 'datetime', description: 'Scheduled site visit', hints: ['site visit', 'visit'] },
  ],
};

const x = new OfflineExtractor();
const extract = (schema: ExtractionSchema, t: Turn[]) => x.extract({ schema, turns: t, knownProfile: {}, now: Date.parse('2026-02-01T00:00:00Z') });
const byField = (facts: ExtractedFact[], field: string) => facts.filter((f) => f.field === field);

// Two calls ten days apart: the budget changes (docs/design.md's running example).
const call1 = turns('c1', [
  { role: 'agent', speaker: 'Asha', at: '2026-01-05T10:00:00Z', text: 'Hello, this is Asha from Prestige Homes. Who am I speaking with?' },
  { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-05T10:00:06Z', text: 'Hi Asha, my name is Rajiv Kumar.' },
  { role: 'agent', speaker: 'Asha', at: '2026-01-05T10:00:11Z', text: 'Nice to meet you, Rajiv. What kind of home are you looking for?' },
  { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-05T10:00:18Z', text: "I'm looking for a 3 BHK flat, ideally near Whitefield because my office is there." },
  { role: 'agent', speaker: 'Asha', at: '2026-01-05T10:00:25Z', text: 'Great. And what budget do you have in mind?' },
  { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-05T10:00:31Z', text: 'My budget is around 50 lakhs for now.' },
  { role: 'agent', speaker: 'Asha', at: '2026-01-05T10:00:38Z', text: 'Have you applied for a home loan yet?' },
  { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-05T10:00:44Z', text: 'Yes, I applied for a loan with HDFC last week, still waiting.' },
  { role: 'agent', speaker: 'Asha', at: '2026-01-05T10:00:52Z', text: 'Would you like to do a site visit at Brigade Lakefront?' },
  { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-05T10:00:58Z', text: "Sure, let's do the site visit tomorrow at 11am." },
  { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-05T10:01:09Z', text: 'No, thanks. Bye.' },
]);
const call2 = turns('c2', [
  { role: 'agent', speaker: 'Asha', at: '2026-01-15T16:30:13Z', text: 'Congratulations! Does that change your budget?' },
  { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-15T16:30:20Z', text: 'Yes, I got approved for 80 lakhs, so that is my budget now.', asr: 0.95 },
  { role: 'agent', speaker: 'Asha', at: '2026-01-15T16:30:27Z', text: 'With 80 lakhs we could also look at 4 BHK options in Sarjapur.' },
  { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-15T16:30:35Z', text: "Maybe, I'm thinking about Sarjapur too, my wife likes the schools there.", asr: 0.55 },
]);

describe('OfflineExtractor.extract: real-estate calls', () => {
  it('extracts the first and the changed budget, each with its own evidence', async () => {
    const budgets = byField(await extract(realEstate, [...call1, ...call2]), 'budget');
    expect(budgets).toEqual([
      { field: 'budget', value: { amount: 5_000_000, currency: 'INR' }, source: 'explicit', evidence: ['c1-5'] },
      { field: 'budget', value: { amount: 8_000_000, currency: 'INR' }, source: 'explicit', evidence: ['c2-1'] },
    ]);
  });

  it('reads name, bedrooms, location, loan status (with when) and a relative site-visit time', async () => {
    const facts = await extract(realEstate, call1);
    expect(byField(facts, 'full_name')).toEqual([{ field: 'full_name', value: 'Rajiv Kumar', source: 'explicit', evidence: ['c1-1'] }]);
    expect(byField(facts, 'bedrooms').map((f) => f.value)).toEqual([3]);
    expect(byField(facts, 'preferred_location').map((f) => [f.value, f.source])).toEqual([['Whitefield', 'explicit']]);
    // "last week" said on Monday 2026-01-05 → the week starting Monday 2025-12-29.
    expect(byField(facts, 'loan_status')).toEqual([{ field: 'loan_status', value: 'applied', source: 'explicit', evidence: ['c1-7'], validFrom: '2025-12-29T00:00:00.000Z' }]);
    expect(byField(facts, 'site_visit')).toEqual([{ field: 'site_visit', value: '2026-01-06T11:00:00.000Z', source: 'explicit', evidence: ['c1-9'] }]);
    expect(facts.every((f) => f.evidence.length > 0 && f.evidence.every((id) => call1.some((t) => t.turnId === id)))).toBe(true);
  });

  it('marks hedged and low-confidence speech as inferred', async () => {
    const loc = byField(await extract(realEstate, call2), 'preferred_location');
    expect(loc).toEqual([{ field: 'preferred_location', value: 'Sarjapur', source: 'inferred', evidence: ['c2-3'] }]);
    const hedged = await extract(realEstate, turns('h', [{ role: 'user', at: '2026-01-15T10:00:00Z', text: 'Maybe around 70 lakhs is my budget.' }]));
    expect(hedged).toEqual([{ field: 'budget', value: { amount: 7_000_000, currency: 'INR' }, source: 'inferred', evidence: ['h-0'] }]);
    const mumbled = await extract(realEstate, turns('m', [{ role: 'user', at: '2026-01-15T10:00:00Z', text: 'My budget is 60 lakhs.', asr: 0.4 }]));
    expect(mumbled[0]?.source).toBe('inferred');
    // A hedge covers what follows it, not what came before.
    const partly = await extract(realEstate, turns('p', [{ role: 'user', at: '2026-01-15T10:00:00Z', text: "We're looking in Whitefield or maybe Sarjapur." }]));
    expect(partly).toEqual([{ field: 'preferred_location', value: 'Whitefield', source: 'explicit', evidence: ['p-0'] }]);
  });

  it('yields confirmed facts from an agent turn only when the next user turn confirms it', async () => {
    const facts = await extract(
      realEstate,
      turns('k', [
        { role: 'agent', at: '2026-01-15T10:00:00Z', text: 'Just to confirm, your budget is 80 lakhs, right?' },
        { role: 'user', at: '2026-01-15T10:00:05Z', text: "Yes, that's right." },
        { role: 'agent', at: '2026-01-15T10:00:10Z', text: 'So your budget is 90 lakhs?' },
        { role: 'user', at: '2026-01-15T10:00:15Z', text: "No, it's 85 lakhs." },
        { role: 'agent', at: '2026-01-15T10:00:20Z', text: 'I have booked your site visit for Saturday at 10am.' },
        { role: 'user', at: '2026-01-15T10:00:25Z', text: 'Hmm, let me think about the kitchen.' },
      ]),
    );
    expect(facts).toEqual([
      { field: 'budget', value: { amount: 8_000_000, currency: 'INR' }, source: 'confirmed', evidence: ['k-0', 'k-1'] },
      // "No, it's 85 lakhs" corrects the 90 the agent read back.
      { field: 'budget', value: { amount: 8_500_000, currency: 'INR' }, source: 'explicit', evidence: ['k-2', 'k-3'], correction: true },
    ]);
  });

  it('prefers what the caller says to what is read back, and pairs only adjacent turns', async () => {
    const own = await extract(
      realEstate,
      turns('o', [
        { role: 'agent', at: '2026-01-05T10:00:00Z', text: 'Have you applied for a home loan yet?' },
        { role: 'user', at: '2026-01-05T10:00:05Z', text: 'Yes, I applied for a loan with HDFC last week.' },
      ]),
    );
    expect(own).toEqual([{ field: 'loan_status', value: 'applied', source: 'explicit', evidence: ['o-1'], validFrom: '2025-12-29T00:00:00.000Z' }]);
    // A kept question whose answer was archived must not pair with a later, unrelated "Sure".
    const gap = turns('g', [
      { role: 'agent', at: '2026-01-05T10:00:00Z', text: 'Have you applied for a home loan yet?' },
      { role: 'user', at: '2026-01-05T10:00:10Z', text: 'Sure, see you then.' },
    ]).map((t, i) => ({ ...t, seq: i === 0 ? 7 : 10 }));
    expect(await extract(realEstate, gap)).toEqual([]);
  });

  it('takes a bare answer to the agent question as the asked field', async () => {
    const facts = await extract(
      realEstate,
      turns('q', [
        { role: 'agent', at: '2026-01-15T10:00:00Z', text: "What's your budget?" },
        { role: 'user', at: '2026-01-15T10:00:05Z', text: 'Around 80 lakhs.' },
        { role: 'agent', at: '2026-01-15T10:00:10Z', text: 'Do you have any pets?' },
        { role: 'user', at: '2026-01-15T10:00:15Z', text: 'No.' },
        { role: 'agent', at: '2026-01-15T10:00:20Z', text: 'When would you like the site visit?' },
        { role: 'user', at: '2026-01-15T10:00:25Z', text: 'Next Tuesday at 4.' },
        // A bare "90" has no unit (90 lakhs? 90 dollars?): no fact rather than a wrong one.
        { role: 'agent', at: '2026-01-15T10:00:30Z', text: 'How much can you spend?' },
        { role: 'user', at: '2026-01-15T10:00:35Z', text: "I'd go up to 90." },
      ]),
    );
    expect(facts).toEqual([
      { field: 'budget', value: { amount: 8_000_000, currency: 'INR' }, source: 'explicit', evidence: ['q-0', 'q-1'] },
      { field: 'has_pets', value: false, source: 'explicit', evidence: ['q-2', 'q-3'] },
      { field: 'site_visit', value: '2026-01-20T16:00:00.000Z', source: 'explicit', evidence: ['q-4', 'q-5'] },
    ]);
  });

  it('handles names carefully, negations, former values and currencies', async () => {
    const at = '2026-01-15T10:00:00Z';
    const facts = await extract(
      realEstate,
      turns('n', [
        { role: 'user', at, text: "I'm looking for a flat." },
        { role: 'user', at, text: "Hi, I'm Priya Nair from Pune." },
        { role: 'user', at, text: 'my name is rajiv kumar and I need help' },
        { role: 'user', at, text: "I haven't applied for a loan yet." },
        { role: 'user', at, text: 'My budget was 50 lakhs but now it is 80 lakhs.' },
        { role: 'user', at, text: 'We could spend $450k.' },
        { role: 'user', at, text: "No pets, but my wife's cat visits." },
        { role: 'user', at, text: 'Can I afford 2 crore?' },
      ]),
    );
    expect(byField(facts, 'full_name').map((f) => f.value)).toEqual(['Priya Nair', 'Rajiv Kumar']);
    expect(byField(facts, 'loan_status').map((f) => f.value)).toEqual(['not_applied']);
    expect(byField(facts, 'budget').map((f) => [f.value, f.source, f.evidence[0]])).toEqual([
      [{ amount: 8_000_000, currency: 'INR' }, 'explicit', 'n-4'],
      [{ amount: 450_000, currency: 'USD' }, 'explicit', 'n-5'],
      [{ amount: 20_000_000, currency: 'INR' }, 'inferred', 'n-7'], // a question is no statement
    ]);
    expect(byField(facts, 'has_pets').map((f) => f.value)).toEqual([false]);
  });

  it('stays quiet on small talk that only looks like facts', async () => {
    const schema: ExtractionSchema = {
      fields: [
        { name: 'full_name', category: 'profile', type: 'string', description: "The caller's full name", hints: ['my name is', 'this is', 'i am'] },
        { name: 'location', category: 'temporal', type: 'string', description: 'Where the caller lives or is based', hints: ['i live in', 'moved to'] },
        { name: 'occupation', category: 'temporal', type: 'string', description: "The caller's job", hints: ['i work as', "i'm a"] },
      ],
    };
    const chat = turns(
      's',
      [
        "I'm creating a reading corner for when I have kids.",
        "Next month I'm having an art show with my paintings, can't wait!",
        'We had a blast last year at the Pride fest.',
        'I wanted to tell you about my LGBTQ support group.',
        "I'm so glad, this is Great news.",
      ].map((text, i) => ({ role: 'user' as const, at: `2026-01-15T10:00:0${i}Z`, text })),
    );
    expect(await extract(schema, chat)).toEqual([]);
    const real = await extract(schema, turns('d', [{ role: 'user', at: '2026-01-15T10:00:00Z', text: "Oh and I moved to Denver last month, so I'm not in Austin anymore." }]));
    // "last month" as the time of a change counts back one month from the turn.
    expect(real).toEqual([{ field: 'location', value: 'Denver', source: 'explicit', evidence: ['d-0'], validFrom: '2025-12-15T00:00:00.000Z' }]);
  });

  it('keeps no free-text value that names nothing: a fragment, or the field repeating its own name', async () => {
    const schema: ExtractionSchema = {
      fields: [
        { name: 'pet', category: 'temporal', type: 'string', description: 'A pet the person has', hints: ['my pet', 'adopted a'] },
        { name: 'hobby', category: 'temporal', type: 'string', description: 'A hobby', hints: ['my hobby', 'into'] },
      ],
    };
    const said = ['I adopted a pet.', "I'm into what you said.", 'My hobby is my hobby, really.'].map((text, i) => ({ role: 'user' as const, at: `2026-01-15T10:00:0${i}Z`, text }));
    expect(await extract(schema, turns('g', said))).toEqual([]);
    const real = await extract(schema, turns('r', [{ role: 'user', at: '2026-01-15T10:00:00Z', text: 'My pet is a beagle.' }]));
    expect(real.map((f) => [f.field, f.value])).toEqual([['pet', 'beagle']]);
  });

  it('keeps no value that only judges or gestures ("family means everything", "wanna start"), nor a name that is not the speaker\'s', async () => {
    const schema: ExtractionSchema = {
      fields: [
        { name: 'full_name', category: 'profile', type: 'string', description: "The person's name", hints: ['my name is', 'i am'] },
        { name: 'family_member', category: 'temporal', type: 'string', description: 'A family member', hints: ['my brother', 'my sister'] },
        { name: 'relationship_status', category: 'temporal', type: 'string', description: 'Partner or marriage', hints: ['married', 'single'] },
        { name: 'hobby', category: 'temporal', type: 'string', description: 'An activity the person enjoys', hints: ['started', 'my hobby'] },
      ],
    };
    const said = [
      'Honestly my family is everything to me.',
      'Our family is so wonderful and special.',
      'Those are such beautiful relationships.',
      'My hobby is something I wanna start.',
      'Our little one is two now, her name is Mira!',
      'Same here! How was your week?',
    ].map((text, i) => ({ role: 'user' as const, at: `2026-01-15T10:00:0${i}Z`, text }));
    expect(await extract(schema, turns('n', said))).toEqual([]);
    const real = await extract(
      schema,
      turns('y', [
        { role: 'user', at: '2026-01-15T10:00:00Z', text: 'My name is Priya.' },
        { role: 'user', at: '2026-01-15T10:00:01Z', text: 'My hobby is pottery.' },
      ]),
    );
    expect(real.map((f) => [f.field, f.value])).toEqual([
      ['full_name', 'Priya'],
      ['hobby', 'pottery'],
    ]);
  });

  it('is deterministic', async () => {
    expect(await extract(realEstate, [...call1, ...call2])).toEqual(await extract(realEstate, [...call1, ...call2]));
  });
});

describe('OfflineExtractor.extract: rental verification and healthcare', () => {
  const rental: ExtractionSchema = {
    fields: [
      { name: 'full_name', category: 'profile', type: 'string', description: "The tenant's full name", hints: ['my name is'] },
      { name: 'employer', category: 'profile', type: 'string', description: 'Where the tenant works', hints: ['i work at', 'employer'] },
      { name: 'property_address', category: 'temporal', type: 'string', description: 'Address of the property being verified', hints: ['flat at', 'property at'] },
      { name: 'expected_rent', category: 'temporal', type: 'money', description: 'Monthly rent for the property', hints: ['rent', 'a month'], keyBy: 'property_address' },
      { name: 'move_in_date', category: 'ephemeral', type: 'date', description: 'Planned move-in date', hints: ['move in'] },
      { name: 'email', category: 'profile', type: 'string', description: 'Email address' },
    ],
  };

  it('keys rent by the property in discussion, confirms a name, resolves dates and "from April"', async () => {
    const facts = await extract(
      rental,
      turns('r', [
        { role: 'agent', at: '2026-01-20T14:00:00Z', text: "Hi, I'm calling from SafeRent to verify a rental application. Am I speaking with Daniel Okafor?" },
        { role: 'user', at: '2026-01-20T14:00:05Z', text: 'Yes, speaking.' },
        { role: 'agent', at: '2026-01-20T14:00:10Z', text: 'Which property is this about?' },
        { role: 'user', at: '2026-01-20T14:00:15Z', text: 'The flat at 12 MG Road, Indiranagar.' },
        { role: 'user', at: '2026-01-20T14:00:20Z', text: "It's 25,000 rupees a month." },
        { role: 'user', at: '2026-01-20T14:00:25Z', text: 'The other flat at 44 Church Street costs 30,000 a month.' },
        { role: 'agent', at: '2026-01-20T14:00:30Z', text: 'And the rent at 12 MG Road?' },
        { role: 'user', at: '2026-01-20T14:00:35Z', text: 'It goes up to 27,000 from April.' },
        { role: 'agent', at: '2026-01-20T14:00:40Z', text: 'When are you planning to move in?' },
        { role: 'user', at: '2026-01-20T14:00:45Z', text: 'From the first of March. I work at Infosys, in Electronic City.' },
        { role: 'user', at: '2026-01-20T14:00:50Z', text: 'My email is daniel dot okafor at gmail dot com.' },
      ]),
    );
    expect(byField(facts, 'full_name')).toEqual([{ field: 'full_name', value: 'Daniel Okafor', source: 'confirmed', evidence: ['r-0', 'r-1'] }]);
    expect(byField(facts, 'expected_rent').map((f) => [f.value, f.qualifier, f.validFrom])).toEqual([
      [{ amount: 25_000, currency: 'INR' }, '12 MG Road, Indiranagar', undefined],
      [{ amount: 30_000, currency: 'INR' }, '44 Church Street', undefined],
      [{ amount: 27_000, currency: 'INR' }, '12 MG Road, Indiranagar', '2026-04-01T00:00:00.000Z'],
    ]);
    expect(byField(facts, 'move_in_date').map((f) => f.value)).toEqual(['2026-03-01']);
    expect(byField(facts, 'employer').map((f) => f.value)).toEqual(['Infosys']);
    expect(byField(facts, 'email').map((f) => f.value)).toEqual(['daniel.okafor@gmail.com']);
  });

  const healthcare: ExtractionSchema = {
    fields: [
      { name: 'medication', category: 'temporal', type: 'string', description: 'Medication the patient currently takes', hints: ['taking', 'been on', 'prescribed'] },
      { name: 'dosage', category: 'temporal', type: 'string', description: 'Dose of the current medication', hints: ['mg', 'dose'] },
      { name: 'symptom', category: 'temporal', type: 'string', description: 'Main symptom the patient reports', hints: ['pain', 'feeling', 'dizzy'] },
      { name: 'pain_level', category: 'temporal', type: 'number', description: 'Pain on a 0-10 scale', hints: ['pain level', 'out of 10'] },
      { name: 'appointment', category: 'ephemeral', type: 'datetime', description: 'Next follow-up appointment', hints: ['appointment', 'follow-up'] },
    ],
  };

  it('reads medication since a date, dose, symptom, pain level and a confirmed appointment', async () => {
    const facts = await extract(
      healthcare,
      turns('h', [
        { role: 'agent', at: '2026-01-15T09:00:00Z', text: 'How have you been feeling since the new medication?' },
        { role: 'user', at: '2026-01-15T09:00:07Z', text: "Better, mostly. Since last Monday I've been on metformin, 500 mg twice a day." },
        { role: 'user', at: '2026-01-15T09:00:14Z', text: 'My knee pain is about a six out of ten.' },
        { role: 'user', at: '2026-01-15T09:00:20Z', text: 'I stopped taking ibuprofen yesterday.' },
        { role: 'agent', at: '2026-01-15T09:00:27Z', text: 'Can we book your follow-up appointment for next Thursday at 10am?' },
        { role: 'user', at: '2026-01-15T09:00:33Z', text: "Yes, that's right." },
      ]),
    );
    expect(facts).toEqual([
      { field: 'medication', value: 'metformin', source: 'explicit', evidence: ['h-1'], validFrom: '2026-01-12T00:00:00.000Z' },
      { field: 'dosage', value: '500 mg twice a day', source: 'explicit', evidence: ['h-1'], validFrom: '2026-01-12T00:00:00.000Z' },
      { field: 'symptom', value: 'knee pain', source: 'explicit', evidence: ['h-2'] },
      { field: 'pain_level', value: 6, source: 'explicit', evidence: ['h-2'] },
      // An ending names what held until then; the resolver ends it only if it is current.
      { field: 'medication', value: 'ibuprofen', source: 'explicit', evidence: ['h-3'], validFrom: '2026-01-14T00:00:00.000Z', ended: true },
      { field: 'appointment', value: '2026-01-22T10:00:00.000Z', source: 'confirmed', evidence: ['h-4', 'h-5'] },
    ]);
  });
});

describe('OfflineExtractor.compress', () => {
  const compress = (t: Turn[], extra: { userName?: string; agentName?: string } = {}) => x.compress({ turns: t, now: Date.parse('2026-02-01T00:00:00Z'), ...extra });
  const RELATIVE_OR_FIRST_PERSON = /\b(i|i'm|i've|i'd|me|my|mine|we|our|us|you|your|yesterday|today|tomorrow|tonight)\b/i;

  it('writes self-contained facts: named speaker with role, no first person, absolute dates', async () => {
    const acus = [];
    for (let i = 0; i < call1.length; i += 5) acus.push(...(await compress(call1.slice(i, i + 5))));
    expect(acus.length).toBeGreaterThan(4);
    for (const a of acus) {
      expect(a.text).not.toMatch(RELATIVE_OR_FIRST_PERSON);
      expect(a.text).toMatch(/Rajiv Kumar|Asha \(agent\)|The user's name is/);
      expect(a.text).toMatch(/as of 2026-01-05\.$/);
      expect(a.turnRefs.length).toBeGreaterThan(0);
    }
    const texts = acus.map((a) => a.text);
    expect(texts).toContain("Rajiv Kumar (user) is looking for a 3 BHK flat, ideally near Whitefield because Rajiv Kumar's office is there, as of 2026-01-05.");
    expect(texts).toContain('Rajiv Kumar (user) applied for a loan with HDFC in the week of 2025-12-29, still waiting, as of 2026-01-05.');
    expect(texts.find((t) => t.includes('site visit'))).toContain('on 2026-01-06 at 11am');
    expect(texts.some((t) => /thanks|bye/i.test(t))).toBe(false);
  });

  it('merges a question with a bare answer and turns "yesterday" into a date', async () => {
    const acus = await compress(
      turns('m', [
        { role: 'agent', speaker: 'Asha', at: '2026-01-15T10:00:00Z', text: "What's your budget?" },
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-15T10:00:05Z', text: 'Around 80 lakhs.' },
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-15T10:00:10Z', text: 'The bank approved my loan yesterday.' },
        { role: 'agent', speaker: 'Asha', at: '2026-01-15T10:00:15Z', text: 'Do you have any pets?' },
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-15T10:00:20Z', text: 'Yes, a golden retriever.' },
      ]),
    );
    expect(acus).toEqual([
      { text: 'Rajiv Kumar (user) said the budget is around 80 lakhs, as of 2026-01-15.', turnRefs: ['m-0', 'm-1'], validAt: '2026-01-15T10:00:05.000Z' },
      { text: "The bank approved Rajiv Kumar's loan on 2026-01-14, as of 2026-01-15.", turnRefs: ['m-2'], validAt: '2026-01-15T10:00:10.000Z' },
      { text: 'Rajiv Kumar (user) has pets (a golden retriever), as of 2026-01-15.', turnRefs: ['m-3', 'm-4'], validAt: '2026-01-15T10:00:20.000Z' },
    ]);
  });

  it('produces nothing for filler and says "The user" / "The agent" without names', async () => {
    const filler = turns(
      'f',
      ['Hello?', 'Okay.', 'Thanks!', 'Mm-hmm.', 'Bye.'].map((text, i) => ({ role: i % 2 ? 'agent' : 'user', at: `2026-01-15T10:00:0${i}Z`, text })),
    );
    expect(await compress(filler)).toEqual([]);
    const anon = await compress(turns('a', [{ role: 'user', at: '2026-01-15T10:00:00Z', text: "I'm moving to Pune next month." }]));
    expect(anon.map((a) => a.text)).toEqual(['The user is moving to Pune in February 2026, as of 2026-01-15.']);
    const named = await compress(turns('b', [{ role: 'user', at: '2026-01-15T10:00:00Z', text: 'I work at Infosys.' }]), { userName: 'Meera Shah' });
    expect(named[0]?.text).toBe('Meera Shah (user) works at Infosys, as of 2026-01-15.');
  });

  it("drops a reaction to the listener's news, keeping the news and a reaction that tells the speaker's own", async () => {
    const acus = await compress(
      turns('x', [
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-15T10:00:00Z', text: 'We finally visited the Whitefield flat on Sunday.' },
        { role: 'agent', speaker: 'Asha', at: '2026-01-15T10:00:05Z', text: 'Wow, love that place! Sounds like a great visit. Glad you liked it.' },
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-15T10:00:10Z', text: 'Sorry to hear about the delay, we had the same trouble with our landlord.' },
      ]),
    );
    expect(acus.map((a) => a.turnRefs)).toEqual([['x-0'], ['x-2']]);
    expect(acus[1]!.text).toContain('landlord');
  });

  it('keeps only what the caller heard of an interrupted agent turn, and marks it', async () => {
    const acus = await compress(
      turns('i', [
        { role: 'agent', speaker: 'Asha', at: '2026-01-15T10:00:00Z', text: 'The Whitefield flat is priced at 78 lakhs and', interrupted: true },
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-15T10:00:03Z', text: 'Is there parking?' },
      ]),
    );
    expect(acus.map((a) => a.text)).toEqual([
      // The function word at the cut ("and") was not the start of anything the caller heard.
      'Asha (agent) said the Whitefield flat is priced at 78 lakhs (interrupted), as of 2026-01-15.',
      'Rajiv Kumar (user) asked "Is there parking?", as of 2026-01-15.',
    ]);
  });

  it('drops "yet" from a question answered yes, keeps it in a denial', async () => {
    const acus = await compress(
      turns('y', [
        { role: 'agent', speaker: 'Asha', at: '2026-01-05T10:00:00Z', text: 'Have you applied for a home loan yet?' },
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-05T10:00:05Z', text: 'Yes, with HDFC.' },
        { role: 'agent', speaker: 'Asha', at: '2026-01-05T10:00:10Z', text: 'Have you visited the site yet?' },
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-05T10:00:15Z', text: 'No, next week.' },
      ]),
    );
    expect(acus.map((a) => a.text)).toEqual([
      'Rajiv Kumar (user) has applied for a home loan (with HDFC), as of 2026-01-05.',
      'Rajiv Kumar (user) has not visited the site yet (in the week of 2026-01-12), as of 2026-01-05.',
    ]);
  });

  it('quotes no half question of an interrupted agent turn: the clause cut off is dropped, the whole one before it kept', async () => {
    const acus = await compress(
      turns('h', [
        { role: 'agent', speaker: 'Meera', at: '2026-01-15T10:00:00Z', text: 'Lovely. Which area are you considering, and what is your', interrupted: true },
        { role: 'user', speaker: 'Asha Rao', at: '2026-01-15T10:00:03Z', text: 'Somewhere near Whitefield.' },
      ]),
    );
    expect(acus[0]!.text).toBe('Meera (agent) asked "Which area is Asha Rao considering?" (interrupted) and Asha Rao (user) answered "Somewhere near Whitefield", as of 2026-01-15.');
  });

  it('drops lead-ins by sentence structure: discourse markers and acknowledgements before a statement; an acknowledging act becomes the verb', async () => {
    const acus = await compress(
      turns('l', [
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-15T10:00:00Z', text: 'Good news though, the bank approved my loan.' },
        { role: 'agent', speaker: 'Asha', at: '2026-01-15T10:00:05Z', text: 'Wonderful, with 80 lakhs we can look at bigger flats. Noted: 80 lakhs near Whitefield.' },
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-15T10:00:10Z', text: 'By the way, my wife prefers Sarjapur. Maybe, we could see both.' },
        { role: 'agent', speaker: 'Asha', at: '2026-01-15T10:00:15Z', text: 'Booked for Monday at 5pm.' },
      ]),
    );
    expect(acus.map((a) => a.text)).toEqual([
      "The bank approved Rajiv Kumar's loan, as of 2026-01-15.",
      "Asha (agent) said with 80 lakhs Asha's team can look at bigger flats, as of 2026-01-15.",
      'Asha (agent) noted 80 lakhs near Whitefield, as of 2026-01-15.',
      // A hedge is no lead-in: it says how sure the rest is.
      "Rajiv Kumar's wife prefers Sarjapur; maybe, Rajiv Kumar (user) and family could see both, as of 2026-01-15.",
      'Asha (agent) booked for Monday 2026-01-19 at 5pm, as of 2026-01-15.',
    ]);
  });

  it("merges the caller's question with the agent's answer, and drops small talk addressed by name", async () => {
    const acus = await compress(
      turns('q', [
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-15T10:00:00Z', text: 'Thanks, Asha! Does the flat allow pets?' },
        { role: 'agent', speaker: 'Asha', at: '2026-01-15T10:00:05Z', text: 'Yes, small pets are fine. Wow, Rajiv!' },
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-15T10:00:10Z', text: 'Long time no see, Asha. Way to go!' },
      ]),
    );
    expect(acus.map((a) => [a.text, a.turnRefs])).toEqual([
      ['Rajiv Kumar (user) asked "Does the flat allow pets?" and Asha (agent) answered "yes, small pets are fine", as of 2026-01-15.', ['q-0', 'q-1']],
    ]);
  });

  it('pairs a question with the first sentence of a full answer past its thanks, and keeps the answer on its own too', async () => {
    const acus = await compress(
      turns('w', [
        { role: 'user', speaker: 'Meera Shah', at: '2026-01-15T10:00:00Z', text: 'What made you pick Wakad for the office?' },
        { role: 'agent', speaker: 'Priya', at: '2026-01-15T10:00:05Z', text: 'Thanks, Meera! I wanted a short commute for the whole team. It also has good schools.' },
      ]),
    );
    expect(acus.map((a) => [a.text, a.turnRefs])).toEqual(
      [
        ['Meera Shah (user) asked "What made Priya pick Wakad for the office?" and Priya (agent) answered "Priya wanted a short commute for the whole team"', ['w-0', 'w-1']],
        ['Priya (agent) wanted a short commute for the whole team', ['w-1']],
        ['Priya (agent) said it also has good schools', ['w-1']],
      ].map(([t, r]) => [`${String(t)}, as of 2026-01-15.`, r]),
    );
  });

  it('keeps verb agreement when rewriting first and second person', async () => {
    const acus = await compress(
      turns('v', [
        { role: 'user', speaker: 'Meera Shah', at: '2026-01-15T10:00:00Z', text: "I'm lucky to have my husband and kids. We're flexible on dates." },
        { role: 'agent', speaker: 'Priya', at: '2026-01-15T10:00:05Z', text: "I'll call you back on Saturday." },
      ]),
    );
    expect(acus.map((a) => a.text)).toEqual([
      "Meera Shah (user) is lucky to have Meera Shah's husband and kids, as of 2026-01-15.",
      'Meera Shah (user) and family are flexible on dates, as of 2026-01-15.',
      'Priya (agent) will call Meera Shah back on Saturday 2026-01-17, as of 2026-01-15.',
    ]);
  });

  it('splices no answer into a question: "said the budget is" only for a bare value, and a self-introduction does not state the name of itself', async () => {
    const acus = await compress(
      turns('s', [
        { role: 'agent', speaker: 'Asha', at: '2026-01-05T10:00:00Z', text: 'Who am I speaking with?' },
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-05T10:00:06Z', text: 'Hi Asha, my name is Rajiv Kumar.' },
        { role: 'agent', speaker: 'Asha', at: '2026-01-05T10:00:11Z', text: 'What kind of home are you looking for?' },
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-05T10:00:18Z', text: "I'm looking for a 3 BHK flat near Whitefield." },
        { role: 'agent', speaker: 'Asha', at: '2026-01-05T10:00:25Z', text: 'What budget do you have in mind?' },
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-05T10:00:31Z', text: 'My budget is around 50 lakhs for now.' },
        { role: 'agent', speaker: 'Asha', at: '2026-01-05T10:00:38Z', text: 'What is your budget for the second flat?' },
        { role: 'user', speaker: 'Rajiv Kumar', at: '2026-01-05T10:00:44Z', text: "It's around 30 lakhs." },
      ]),
    );
    expect(acus.map((a) => a.text.replace(/, as of 2026-01-05\.$/, ''))).toEqual([
      'Asha (agent) asked "Who is Asha speaking with?" and Rajiv Kumar (user) answered "the user\'s name is Rajiv Kumar"',
      "The user's name is Rajiv Kumar",
      'Asha (agent) asked "What kind of home is Rajiv Kumar looking for?" and Rajiv Kumar (user) answered "Rajiv Kumar is looking for a 3 BHK flat near Whitefield"',
      'Rajiv Kumar (user) is looking for a 3 BHK flat near Whitefield',
      'Asha (agent) asked "What budget does Rajiv Kumar have in mind?" and Rajiv Kumar (user) answered "Rajiv Kumar\'s budget is around 50 lakhs for now"',
      "Rajiv Kumar's budget is around 50 lakhs for now",
      'Rajiv Kumar (user) said the budget for the second flat is around 30 lakhs',
    ]);
  });

  it('is deterministic', async () => {
    expect(await compress(call1.slice(0, 5))).toEqual(await compress(call1.slice(0, 5)));
  });
});
