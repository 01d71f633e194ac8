import type { Scenario } from '../types.ts';

const at = (day: string, t = '10:00:00') => `2026-${day}T${t}Z`;
const S = 'rental-verification';

export const rentals: Scenario[] = [
  {
    id: 'rent-two-flats',
    domain: 'rentals',
    rule: 'several keyBy values in one turn',
    schema: S,
    calls: [[{ role: 'user', text: 'The rent is 30,000 for the MG Road flat and 45,000 for the Indiranagar flat.', at: at('01-05') }]],
    context: { facts: { 'expected_rent:mg road': '30000 INR', 'expected_rent:indiranagar': '45000 INR' } },
  },
  {
    id: 'rent-thousand',
    domain: 'rentals',
    rule: 'spoken amounts: thousand',
    schema: S,
    calls: [
      [
        { role: 'agent', text: 'What rent are you expecting?', at: at('01-05') },
        { role: 'user', text: 'Around 40 thousand rupees per month.', at: at('01-05', '10:00:04') },
      ],
    ],
    context: { facts: { expected_rent: '40000 INR' } },
  },
  {
    id: 'rent-k',
    domain: 'rentals',
    rule: 'spoken amounts: k',
    schema: S,
    calls: [[{ role: 'user', text: 'The rent is 35k a month.', at: at('01-05') }]],
    context: { facts: { expected_rent: '35000 INR' } },
  },
  {
    id: 'rent-raised',
    domain: 'rentals',
    rule: 'later validFrom supersedes',
    schema: S,
    calls: [
      [{ role: 'user', text: 'The rent is 30,000 rupees per month.', at: at('01-05') }],
      [{ role: 'user', text: 'The owner raised it, the rent is now 33,000 rupees per month.', at: at('03-05') }],
    ],
    timeline: {
      expected_rent: [
        ['30000 INR', 'superseded'],
        ['33000 INR', 'active'],
      ],
    },
    search: { query: 'What is the monthly rent?', firstHas: '33' },
  },
  {
    id: 'rent-employer',
    domain: 'rentals',
    rule: 'profile fields in the context block',
    schema: S,
    calls: [[{ role: 'user', text: 'I work at Infosys.', at: at('01-05') }]],
    context: { facts: { employer: 'Infosys' }, blockHas: ['Infosys'] },
  },
  {
    id: 'rent-employer-change',
    domain: 'rentals',
    rule: 'later validFrom supersedes (profile)',
    schema: S,
    calls: [[{ role: 'user', text: 'I work at Infosys.', at: at('01-05') }], [{ role: 'user', text: 'I switched jobs, I work at Wipro now.', at: at('03-05') }]],
    context: { facts: { employer: 'Wipro' } },
    search: { query: 'Where does the tenant work?', firstHas: 'Wipro' },
  },
  {
    id: 'rent-move-in-expires',
    domain: 'rentals',
    rule: 'ephemeral facts expire',
    schema: S,
    calls: [[{ role: 'user', text: 'I am moving in on 10 January.', at: at('01-05') }], [{ role: 'user', text: 'Calling about the deposit.', at: at('03-05') }]],
    timeline: { move_in_date: [['2026-01-10', 'expired']] },
  },
  {
    id: 'rent-self-correct',
    domain: 'rentals',
    rule: 'a self-correction inside one turn stores only the fix',
    schema: S,
    calls: [[{ role: 'user', text: 'The rent is 25,000, sorry, I meant 28,000 rupees a month.', at: at('01-05') }]],
    timeline: { expected_rent: [['28000 INR', 'active']] },
  },
  {
    id: 'rent-misheard',
    domain: 'rentals',
    rule: 'lower confidence never supersedes higher',
    schema: S,
    calls: [[{ role: 'user', text: 'The rent is 30,000 rupees per month.', at: at('01-05') }], [{ role: 'user', text: 'The rent is 13,000 rupees per month.', at: at('01-09'), asrConfidence: 0.3 }]],
    context: { facts: { expected_rent: '30000 INR' }, possibly: { expected_rent: '13000 INR' } },
  },
  {
    id: 'rent-short-call-search',
    domain: 'rentals',
    rule: 'search finds facts of a short call',
    schema: S,
    calls: [[{ role: 'user', text: 'I work at Accenture.', at: at('01-05') }]],
    search: { query: 'employer?', firstHas: 'Accenture' },
  },
];
