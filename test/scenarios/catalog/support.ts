import type { ExtractionSchema } from '../../../src/core/extraction-schema.ts';
import type { Scenario } from '../types.ts';

const at = (day: string, t = '10:00:00') => `2026-${day}T${t}Z`;
const S: ExtractionSchema = {
  fields: [
    { name: 'full_name', category: 'profile', type: 'string', description: "The customer's full name", hints: ['my name is', 'this is'] },
    { name: 'email', category: 'profile', type: 'string', description: "The customer's email address", hints: ['email', 'mail me at'] },
    { name: 'plan', category: 'temporal', type: 'string', description: 'The subscription plan the customer is on', hints: ['plan', 'subscribed to', 'upgraded to', 'switched to'] },
    { name: 'city', category: 'temporal', type: 'string', description: 'City the customer lives in', hints: ['i live in', 'moved to', 'based in'] },
    { name: 'callback', category: 'ephemeral', type: 'datetime', description: 'When to call the customer back', hints: ['call me back', 'callback'] },
  ],
};

export const support: Scenario[] = [
  {
    id: 'sup-plan-upgrade',
    domain: 'support',
    rule: 'later validFrom supersedes',
    schema: S,
    calls: [[{ role: 'user', text: 'I am on the Basic plan.', at: at('01-05') }], [{ role: 'user', text: 'I upgraded to the Premium plan last week.', at: at('02-05') }]],
    context: { facts: { plan: 'Premium plan' } },
    search: { query: 'Which plan is the customer on?', firstHas: 'Premium' },
    timeline: {
      plan: [
        ['Basic plan', 'superseded'],
        ['Premium plan', 'active'],
      ],
    },
  },
  {
    id: 'sup-city-moved-relative',
    domain: 'support',
    rule: 'relative-time move supersedes',
    schema: S,
    calls: [[{ role: 'user', text: 'I live in Pune.', at: at('01-05') }], [{ role: 'user', text: 'I moved to Hyderabad two weeks ago.', at: at('03-10') }]],
    timeline: {
      city: [
        ['Pune', 'superseded'],
        ['Hyderabad', 'active'],
      ],
    },
    context: { facts: { city: 'Hyderabad' } },
    search: { query: 'Which city does the customer live in?', firstHas: 'Hyderabad', source: 'fact', outdated: { has: 'Pune', now: 'Hyderabad' } },
  },
  {
    id: 'sup-city-retracted',
    domain: 'support',
    rule: 'a correction with an earlier date retracts',
    schema: S,
    calls: [
      [
        { role: 'user', text: 'I live in Chennai.', at: at('03-10') },
        { role: 'agent', text: 'Noted.', at: at('03-10', '10:00:05') },
        { role: 'user', text: 'Actually I moved to Mysore last month.', at: at('03-10', '10:00:10') },
      ],
    ],
    timeline: {
      city: [
        ['Chennai', 'retracted'],
        ['Mysore', 'active'],
      ],
    },
    context: { facts: { city: 'Mysore' } },
    search: { query: 'Which city does the customer live in?', firstHas: 'Mysore', source: 'fact', outdated: { has: 'Chennai', now: 'Mysore' } },
  },
  {
    id: 'sup-email-correction',
    domain: 'support',
    rule: 'a correction cue retracts',
    schema: S,
    calls: [[{ role: 'user', text: 'My email is ravi@example.com.', at: at('01-05') }], [{ role: 'user', text: 'Sorry, my email is actually ravi.k@example.com.', at: at('01-06') }]],
    context: { facts: { email: 'ravi.k@example.com' } },
    timeline: {
      email: [
        ['ravi@example.com', 'retracted'],
        ['ravi.k@example.com', 'active'],
      ],
    },
    search: { query: 'email', firstHas: 'ravi.k@example.com', source: 'fact' },
  },
  {
    id: 'sup-callback-expires',
    domain: 'support',
    rule: 'ephemeral facts expire',
    schema: S,
    calls: [[{ role: 'user', text: 'Please call me back on 6 January at 5 pm.', at: at('01-05') }], [{ role: 'user', text: 'Hi again.', at: at('02-05') }]],
    timeline: { callback: [['2026-01-06T17:00:00.000Z', 'expired']] },
    context: { factsLack: ['callback'] },
  },
  {
    id: 'sup-name',
    domain: 'support',
    rule: 'profile fields in the context block',
    schema: S,
    calls: [[{ role: 'user', text: 'My name is Meera Iyer.', at: at('01-05') }]],
    context: { facts: { full_name: 'Meera Iyer' }, blockHas: ['Meera Iyer'] },
    search: { query: "customer's name", firstHas: 'Meera Iyer' },
    timeline: { full_name: [['Meera Iyer', 'active']] },
  },
  {
    id: 'sup-misheard-plan',
    domain: 'support',
    rule: 'lower confidence never supersedes higher',
    schema: S,
    calls: [[{ role: 'user', text: 'I am on the Premium plan.', at: at('01-05') }], [{ role: 'user', text: 'I am on the Basic plan.', at: at('01-09'), asrConfidence: 0.3 }]],
    context: { facts: { plan: 'Premium plan' } },
    timeline: {
      plan: [
        ['Premium plan', 'active', 'explicit'],
        ['Basic plan', 'active', 'inferred'],
      ],
    },
    search: { query: 'Which plan is the customer on?', firstHas: 'Premium', source: 'fact' },
  },
  {
    id: 'sup-plan-asof',
    domain: 'support',
    rule: 'asOf answers as of a past time',
    schema: S,
    calls: [[{ role: 'user', text: 'I am on the Basic plan.', at: at('01-05') }], [{ role: 'user', text: 'I switched to the Family plan.', at: at('03-05') }]],
    search: { query: 'plan', asOf: at('02-01'), firstHas: 'Basic' },
    timeline: {
      plan: [
        ['Basic plan', 'superseded'],
        ['Family plan', 'active'],
      ],
    },
    context: { facts: { plan: 'Family plan' } },
  },
  {
    id: 'sup-short-call-search',
    domain: 'support',
    rule: 'search finds facts of a short call',
    schema: S,
    calls: [[{ role: 'user', text: 'My email is meera@example.org.', at: at('01-05') }]],
    search: { query: 'what is the email address?', firstHas: 'meera@example.org' },
    timeline: { email: [['meera@example.org', 'active']] },
    context: { facts: { email: 'meera@example.org' } },
  },
  {
    id: 'sup-email-self-correct',
    domain: 'support',
    rule: 'a self-correction inside one turn stores only the fix',
    schema: S,
    calls: [[{ role: 'user', text: 'My email is ravi@example.com, sorry, I meant ravi.k@example.com.', at: at('01-05') }]],
    timeline: { email: [['ravi.k@example.com', 'active']] },
    context: { facts: { email: 'ravi.k@example.com' }, blockLacks: ['email: ravi@example.com'] },
    search: { query: 'email address', firstHas: 'ravi.k@example.com', source: 'fact' },
  },
  {
    id: 'sup-plan-outdated-search',
    domain: 'support',
    rule: 'outdated values rank below the current one, marked',
    schema: S,
    calls: [[{ role: 'user', text: 'I am on the Basic plan.', at: at('01-05') }], [{ role: 'user', text: 'I upgraded to the Premium plan.', at: at('02-05') }]],
    timeline: {
      plan: [
        ['Basic plan', 'superseded'],
        ['Premium plan', 'active'],
      ],
    },
    context: { facts: { plan: 'Premium plan' }, blockLacks: ['plan: Basic plan'] },
    search: { query: 'Basic plan', firstHas: 'Premium', source: 'fact', outdated: { has: 'Basic', now: 'Premium plan' } },
  },
  {
    id: 'sup-recent-turn-search',
    domain: 'support',
    rule: 'search finds a kept turn no field holds',
    schema: S,
    calls: [[{ role: 'user', text: 'My router keeps blinking red after the firmware update.', at: at('01-05') }]],
    context: { blockHas: ['blinking red'] },
    search: { query: 'router blinking red', firstHas: 'router', source: 'recent' },
  },
  {
    id: 'sup-city-since-march',
    domain: 'support',
    rule: 'relative-time move supersedes and asOf sees the old value',
    schema: S,
    calls: [[{ role: 'user', text: 'I live in Pune.', at: at('01-05') }], [{ role: 'user', text: 'I moved to Delhi last month.', at: at('04-10') }]],
    timeline: {
      city: [
        ['Pune', 'superseded'],
        ['Delhi', 'active'],
      ],
    },
    context: { facts: { city: 'Delhi' } },
    search: { query: 'Which city does the customer live in?', asOf: at('02-15'), firstHas: 'Pune', firstLacks: 'Delhi' },
  },
];
