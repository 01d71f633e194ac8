import type { Scenario } from '../types.ts';

const at = (day: string, t = '10:00:00') => `2026-${day}T${t}Z`;
const S = 'real-estate';

export const realEstate: Scenario[] = [
  {
    id: 're-budget-raised',
    domain: 'real-estate',
    rule: 'later validFrom supersedes',
    schema: S,
    calls: [
      [
        { role: 'agent', text: 'What budget do you have in mind?', at: at('01-05') },
        { role: 'user', text: 'My budget is 50 lakhs.', at: at('01-05', '10:00:05') },
      ],
      [{ role: 'user', text: 'The bank approved 80 lakhs, so my budget is now 80 lakhs.', at: at('02-10') }],
    ],
    timeline: {
      budget: [
        ['5000000 INR', 'superseded'],
        ['8000000 INR', 'active'],
      ],
    },
    context: { facts: { budget: '8000000 INR' } },
    search: { query: 'What budget was approved by the bank?', firstHas: '80' },
  },
  {
    id: 're-budget-history-asof',
    domain: 'real-estate',
    rule: 'asOf answers as of a past time',
    schema: S,
    calls: [[{ role: 'user', text: 'My budget is 50 lakhs.', at: at('01-05') }], [{ role: 'user', text: 'My budget is now 80 lakhs.', at: at('03-01') }]],
    timeline: {
      budget: [
        ['5000000 INR', 'superseded'],
        ['8000000 INR', 'active'],
      ],
    },
    search: { query: 'What was my budget?', asOf: at('02-01'), firstHas: '50', firstLacks: '80' },
    context: { facts: { budget: '8000000 INR' } },
  },
  {
    id: 're-location-correction',
    domain: 'real-estate',
    rule: 'a correction cue retracts',
    schema: S,
    calls: [[{ role: 'user', text: "I'm looking in Whitefield.", at: at('01-05') }], [{ role: 'user', text: 'Sorry, correction: I prefer Indiranagar, not Whitefield.', at: at('01-12') }]],
    timeline: {
      preferred_location: [
        ['Whitefield', 'retracted'],
        ['Indiranagar', 'active'],
      ],
    },
    context: { facts: { preferred_location: 'Indiranagar' } },
    search: { query: 'Which area is the buyer looking in?', firstHas: 'Indiranagar' },
  },
  {
    id: 're-self-correct-bedrooms',
    domain: 'real-estate',
    rule: 'a self-correction inside one turn stores only the fix',
    schema: S,
    calls: [[{ role: 'user', text: 'I want a 2 BHK, sorry, I meant 3 BHK.', at: at('01-05') }]],
    timeline: { bedrooms: [['3', 'active']] },
    context: { facts: { bedrooms: '3' } },
    search: { query: 'How many bedrooms?', firstHas: 'bedrooms is 3', source: 'fact' },
  },
  {
    id: 're-misheard-budget',
    domain: 'real-estate',
    rule: 'lower confidence never supersedes higher',
    schema: S,
    calls: [[{ role: 'user', text: 'My budget is 80 lakhs.', at: at('01-05') }], [{ role: 'user', text: 'My budget is 18 lakhs.', at: at('01-20'), asrConfidence: 0.35 }]],
    context: { facts: { budget: '8000000 INR' }, possibly: { budget: '1800000 INR' } },
    search: { query: 'What is my budget?', firstHas: '80' },
    timeline: {
      budget: [
        ['8000000 INR', 'active', 'explicit'],
        ['1800000 INR', 'active', 'inferred'],
      ],
    },
  },
  {
    id: 're-crore',
    domain: 'real-estate',
    rule: 'spoken amounts: crore',
    schema: S,
    calls: [[{ role: 'user', text: 'My budget is 1.2 crore.', at: at('01-05') }]],
    timeline: { budget: [['12000000 INR', 'active']] },
    context: { facts: { budget: '12000000 INR' } },
    search: { query: 'budget', firstHas: '12,000,000', source: 'fact' },
  },
  {
    id: 're-site-visit-expires',
    domain: 'real-estate',
    rule: 'ephemeral facts expire',
    schema: S,
    calls: [[{ role: 'user', text: 'Let us do the site visit on 10 January at 11 am.', at: at('01-05') }], [{ role: 'user', text: 'Hello again.', at: at('02-20') }]],
    timeline: { site_visit: [['2026-01-10T11:00:00.000Z', 'expired']] },
    context: { factsLack: ['site_visit'] },
  },
  {
    id: 're-name-profile',
    domain: 'real-estate',
    rule: 'profile fields in the context block',
    schema: S,
    calls: [[{ role: 'user', text: 'My name is Asha Rao.', at: at('01-05') }]],
    timeline: { full_name: [['Asha Rao', 'active']] },
    context: { facts: { full_name: 'Asha Rao' }, blockHas: ['Asha Rao'] },
    search: { query: "What is the caller's name?", firstHas: 'Asha Rao' },
  },
  {
    id: 're-short-call-search',
    domain: 'real-estate',
    rule: 'search finds facts of a short call',
    schema: S,
    calls: [
      [
        { role: 'agent', text: 'What is your budget?', at: at('01-05') },
        { role: 'user', text: 'My budget is 65 lakhs.', at: at('01-05', '10:00:04') },
      ],
    ],
    search: { query: 'what is the budget?', firstHas: '65' },
    timeline: { budget: [['6500000 INR', 'active']] },
    context: { facts: { budget: '6500000 INR' } },
  },
  {
    id: 're-summary-outdated',
    domain: 'real-estate',
    rule: 'history is marked, current first',
    schema: S,
    calls: [[{ role: 'user', text: 'My budget is 50 lakhs and I want a 2 BHK near Baner.', at: at('01-05') }], [{ role: 'user', text: 'My budget is now 70 lakhs.', at: at('02-05') }]],
    context: { facts: { budget: '7000000 INR' } },
    search: { query: 'budget for the flat', firstHas: '70' },
    timeline: {
      budget: [
        ['5000000 INR', 'superseded'],
        ['7000000 INR', 'active'],
      ],
    },
  },
  {
    id: 're-moved-relative',
    domain: 'real-estate',
    rule: 'relative-time changes date the new value',
    schema: S,
    calls: [[{ role: 'user', text: "I'm looking at Baner.", at: at('01-05') }], [{ role: 'user', text: 'Since last week I prefer Wakad instead.', at: at('02-05') }]],
    context: { facts: { preferred_location: 'Wakad' } },
    timeline: {
      preferred_location: [
        ['Baner', 'superseded'],
        ['Wakad', 'active'],
      ],
    },
    search: { query: 'Which area does the buyer prefer?', firstHas: 'Wakad', source: 'fact', outdated: { has: 'Baner', now: 'Wakad' } },
  },
  {
    id: 're-loan-status',
    domain: 'real-estate',
    rule: 'enum status changes',
    schema: S,
    calls: [[{ role: 'user', text: 'I have applied for a home loan.', at: at('01-05') }], [{ role: 'user', text: 'Good news, the loan got approved yesterday.', at: at('02-05') }]],
    context: { facts: { loan_status: 'approved' } },
    timeline: {
      loan_status: [
        ['applied', 'superseded'],
        ['approved', 'active'],
      ],
    },
    search: { query: 'loan status', firstHas: 'approved', source: 'fact' },
  },
  {
    id: 're-correction-later-call',
    domain: 'real-estate',
    rule: 'a correction cue retracts (no field word)',
    schema: S,
    calls: [[{ role: 'user', text: 'My budget is 60 lakhs.', at: at('01-05') }], [{ role: 'user', text: 'Sorry, I meant 65 lakhs, not 60.', at: at('01-06') }]],
    timeline: {
      budget: [
        ['6000000 INR', 'retracted'],
        ['6500000 INR', 'active'],
      ],
    },
    context: { facts: { budget: '6500000 INR' }, possibly: {}, blockLacks: ['₹60 lakh (INR 6,000,000) (since'] },
    search: { query: 'What is my budget?', firstHas: '65', source: 'fact' },
  },
  {
    id: 're-readback-confirmed',
    domain: 'real-estate',
    rule: 'a read-back the user confirms is confirmed',
    schema: S,
    calls: [
      [
        { role: 'agent', text: 'So your budget is 75 lakhs, right?', at: at('01-05') },
        { role: 'user', text: 'Yes.', at: at('01-05', '10:00:04') },
      ],
    ],
    timeline: { budget: [['7500000 INR', 'active', 'confirmed']] },
    context: { facts: { budget: '7500000 INR' } },
    search: { query: 'budget', firstHas: '75', source: 'fact' },
  },
  {
    id: 're-hedge-candidate',
    domain: 'real-estate',
    rule: 'a hedge waits as an inferred candidate',
    schema: S,
    calls: [[{ role: 'user', text: 'My budget is 80 lakhs.', at: at('01-05') }], [{ role: 'user', text: 'I think maybe my budget is 60 lakhs.', at: at('01-09') }]],
    timeline: {
      budget: [
        ['8000000 INR', 'active', 'explicit'],
        ['6000000 INR', 'active', 'inferred'],
      ],
    },
    context: { facts: { budget: '8000000 INR' }, possibly: { budget: '6000000 INR' } },
    search: { query: 'What is my budget?', firstHas: '80', source: 'fact' },
  },
  {
    id: 're-hedge-settled',
    domain: 'real-estate',
    rule: 'a later explicit statement settles a candidate',
    schema: S,
    calls: [[{ role: 'user', text: 'I think maybe my budget is 60 lakhs.', at: at('01-05') }], [{ role: 'user', text: 'My budget is 60 lakhs, final.', at: at('01-09') }]],
    timeline: { budget: [['6000000 INR', 'active', 'explicit']] },
    context: { facts: { budget: '6000000 INR' }, factsLack: [] },
    search: { query: 'budget', firstHas: '60', source: 'fact' },
  },
  {
    id: 're-summary-marked-outdated',
    domain: 'real-estate',
    rule: 'summaries and ACUs stating a superseded value are marked',
    schema: S,
    calls: [
      [
        { role: 'agent', text: 'Hello, how can I help?', at: at('01-05') },
        { role: 'user', text: 'I want to buy a flat. My budget is 50 lakhs.', at: at('01-05', '10:00:05') },
        { role: 'agent', text: 'Which area?', at: at('01-05', '10:00:10') },
        { role: 'user', text: 'I am looking in Baner.', at: at('01-05', '10:00:15') },
        { role: 'agent', text: 'How many bedrooms?', at: at('01-05', '10:00:20') },
        { role: 'user', text: 'A 2 BHK please.', at: at('01-05', '10:00:25') },
        { role: 'agent', text: 'Any timeline?', at: at('01-05', '10:00:30') },
        { role: 'user', text: 'Within three months.', at: at('01-05', '10:00:35') },
      ],
      [{ role: 'user', text: 'The bank approved 80 lakhs, so my budget is now 80 lakhs.', at: at('02-10') }],
    ],
    timeline: {
      budget: [
        ['5000000 INR', 'superseded'],
        ['8000000 INR', 'active'],
      ],
    },
    context: { facts: { budget: '8000000 INR' }, blockHas: ['[outdated: budget is now ₹80 lakh'] },
    search: { query: 'budget 50 lakhs', firstHas: '80', source: 'fact', outdated: { has: '50', now: '8000000 INR' } },
  },
  {
    id: 're-agent-own-number',
    domain: 'real-estate',
    rule: "the agent's own value is never the user's",
    schema: S,
    calls: [
      [
        { role: 'user', text: 'My number is 98450 12345.', at: at('01-05') },
        { role: 'agent', text: 'You can call our office on 080 4123 4567.', at: at('01-05', '10:00:05') },
      ],
    ],
    timeline: { phone: [['9845012345', 'active']] },
    context: { facts: { phone: '9845012345' }, blockLacks: ['phone: 08041234567'] },
    search: { query: 'phone number', firstHas: '9845012345', source: 'fact' },
  },
  {
    id: 're-lakh-in-words',
    domain: 'real-estate',
    rule: 'spoken amounts: number words and lakh',
    schema: S,
    calls: [[{ role: 'user', text: 'I can spend up to ninety lakh rupees.', at: at('01-05') }]],
    timeline: { budget: [['9000000 INR', 'active']] },
    context: { facts: { budget: '9000000 INR' } },
    search: { query: 'How much can the buyer spend?', firstHas: '90', source: 'fact' },
  },
  {
    id: 're-budget-from-to',
    domain: 'real-estate',
    rule: 'a change named "from X to Y" supersedes with Y',
    schema: S,
    calls: [[{ role: 'user', text: 'My budget is 50 lakhs.', at: at('01-05') }], [{ role: 'user', text: 'My budget went up from 50 lakhs to 80 lakhs.', at: at('02-05') }]],
    timeline: {
      budget: [
        ['5000000 INR', 'superseded'],
        ['8000000 INR', 'active'],
      ],
    },
    context: { facts: { budget: '8000000 INR' } },
    search: { query: 'What is the budget now?', firstHas: '80', source: 'fact' },
  },
];
