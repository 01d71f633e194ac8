import type { Scenario } from '../types.ts';

const at = (day: string, t = '10:00:00') => `2026-${day}T${t}Z`;
const S = 'healthcare';

export const healthcare: Scenario[] = [
  {
    id: 'hc-medication-switch',
    domain: 'healthcare',
    rule: 'later validFrom supersedes',
    schema: S,
    calls: [[{ role: 'user', text: 'I am taking metformin.', at: at('01-05') }], [{ role: 'user', text: 'The doctor prescribed glimepiride now.', at: at('02-05') }]],
    timeline: {
      medication: [
        ['metformin', 'superseded'],
        ['glimepiride', 'active'],
      ],
    },
    context: { facts: { medication: 'glimepiride' } },
    search: { query: 'Which medication is the patient on?', firstHas: 'glimepiride' },
  },
  {
    id: 'hc-dosage-self-correct',
    domain: 'healthcare',
    rule: 'a self-correction inside one turn stores only the fix',
    schema: S,
    calls: [[{ role: 'user', text: 'My dosage is 500 mg, sorry, 850 mg.', at: at('01-05') }]],
    timeline: { dosage: [['850 mg', 'active']] },
    context: { facts: { dosage: '850 mg' } },
    search: { query: 'dosage', firstHas: '850', source: 'fact' },
  },
  {
    id: 'hc-dob-self-correct',
    domain: 'healthcare',
    rule: 'a self-correction inside one turn stores only the fix',
    schema: S,
    calls: [[{ role: 'user', text: 'My date of birth is 12 March 1990, sorry, I meant 21 March 1990.', at: at('01-05') }]],
    timeline: { date_of_birth: [['1990-03-21', 'active']] },
    context: { facts: { date_of_birth: '1990-03-21' } },
    search: { query: 'date of birth', firstHas: '1990-03-21', source: 'fact' },
  },
  {
    id: 'hc-pain-level-trend',
    domain: 'healthcare',
    rule: 'later validFrom supersedes',
    schema: S,
    calls: [[{ role: 'user', text: 'My pain level is 7 out of 10.', at: at('01-05') }], [{ role: 'user', text: 'Today the pain level is 3 out of 10.', at: at('01-19') }]],
    timeline: {
      pain_level: [
        ['7', 'superseded'],
        ['3', 'active'],
      ],
    },
    context: { facts: { pain_level: '3' } },
    search: { query: 'What pain level did the patient report last?', firstHas: '3' },
  },
  {
    id: 'hc-pain-asof',
    domain: 'healthcare',
    rule: 'asOf answers as of a past time',
    schema: S,
    calls: [[{ role: 'user', text: 'My pain level is 7 out of 10.', at: at('01-05') }], [{ role: 'user', text: 'The pain level is 2 out of 10 now.', at: at('02-05') }]],
    search: { query: 'pain level', asOf: at('01-20'), firstHas: '7' },
    timeline: {
      pain_level: [
        ['7', 'superseded'],
        ['2', 'active'],
      ],
    },
    context: { facts: { pain_level: '2' } },
  },
  {
    id: 'hc-appointment-expires',
    domain: 'healthcare',
    rule: 'ephemeral facts expire',
    schema: S,
    calls: [[{ role: 'user', text: 'My follow-up appointment is on 8 January at 4 pm.', at: at('01-05') }], [{ role: 'user', text: 'Hi, calling about my report.', at: at('02-05') }]],
    timeline: { appointment: [['2026-01-08T16:00:00.000Z', 'expired']] },
    context: { factsLack: ['appointment'] },
  },
  {
    id: 'hc-misheard-medication',
    domain: 'healthcare',
    rule: 'lower confidence never supersedes higher',
    schema: S,
    calls: [[{ role: 'user', text: 'I am taking metformin.', at: at('01-05') }], [{ role: 'user', text: 'I am taking metoprolol.', at: at('01-10'), asrConfidence: 0.3 }]],
    context: { facts: { medication: 'metformin' } },
    timeline: {
      medication: [
        ['metformin', 'active', 'explicit'],
        ['metoprolol', 'active', 'inferred'],
      ],
    },
    search: { query: 'Which medication is the patient on?', firstHas: 'metformin', source: 'fact' },
  },
  {
    id: 'hc-correction-cue',
    domain: 'healthcare',
    rule: 'a correction cue retracts',
    schema: S,
    calls: [[{ role: 'user', text: 'I am taking aspirin.', at: at('01-05') }], [{ role: 'user', text: 'Correction, I am taking ibuprofen, not aspirin.', at: at('01-06') }]],
    timeline: {
      medication: [
        ['aspirin', 'retracted'],
        ['ibuprofen', 'active'],
      ],
    },
    context: { facts: { medication: 'ibuprofen' } },
    search: { query: 'Which medication is the patient on?', firstHas: 'ibuprofen', source: 'fact', outdated: { has: 'aspirin', now: 'ibuprofen' } },
  },
  {
    id: 'hc-name',
    domain: 'healthcare',
    rule: 'profile fields in the context block',
    schema: S,
    calls: [[{ role: 'user', text: 'My name is Ravi Menon.', at: at('01-05') }]],
    context: { facts: { full_name: 'Ravi Menon' }, blockHas: ['Ravi Menon'] },
    timeline: { full_name: [['Ravi Menon', 'active']] },
    search: { query: "patient's name", firstHas: 'Ravi Menon', source: 'fact' },
  },
  {
    id: 'hc-short-call-search',
    domain: 'healthcare',
    rule: 'search finds facts of a short call',
    schema: S,
    calls: [[{ role: 'user', text: 'I am taking atorvastatin.', at: at('01-05') }]],
    search: { query: 'what medication?', firstHas: 'atorvastatin' },
    timeline: { medication: [['atorvastatin', 'active']] },
    context: { facts: { medication: 'atorvastatin' } },
  },
  {
    id: 'hc-since-monday',
    domain: 'healthcare',
    rule: 'relative-time change ("since Monday") supersedes',
    schema: S,
    calls: [[{ role: 'user', text: 'I am taking metformin.', at: at('01-05') }], [{ role: 'user', text: 'I have been taking insulin since Monday.', at: at('02-05') }]],
    timeline: {
      medication: [
        ['metformin', 'superseded'],
        ['insulin', 'active'],
      ],
    },
    context: { facts: { medication: 'insulin' }, blockHas: ['[outdated: medication is now insulin]'] },
    search: { query: 'Which medication is the patient taking?', firstHas: 'insulin', source: 'fact', outdated: { has: 'metformin', now: 'insulin' } },
  },
  {
    id: 'hc-symptom-since-yesterday',
    domain: 'healthcare',
    rule: 'relative-time change ("since yesterday") supersedes',
    schema: S,
    calls: [[{ role: 'user', text: 'I have a headache.', at: at('01-05') }], [{ role: 'user', text: 'Since yesterday I am feeling dizzy.', at: at('01-20') }]],
    timeline: {
      symptom: [
        ['headache', 'superseded'],
        ['dizzy', 'active'],
      ],
    },
    context: { facts: { symptom: 'dizzy' } },
    search: { query: 'symptom', firstHas: 'dizzy', source: 'fact', outdated: { has: 'headache', now: 'dizzy' } },
  },
  {
    id: 'hc-dosage-readback',
    domain: 'healthcare',
    rule: 'a read-back the user confirms is confirmed',
    schema: S,
    calls: [
      [
        { role: 'agent', text: 'So you are taking 500 mg twice a day, correct?', at: at('01-05') },
        { role: 'user', text: 'Yes, that is right.', at: at('01-05', '10:00:04') },
      ],
    ],
    timeline: { dosage: [['500 mg twice a day', 'active', 'confirmed']] },
    context: { facts: { dosage: '500 mg twice a day' } },
    search: { query: 'What dose is the patient on?', firstHas: '500 mg', source: 'fact' },
  },
  {
    id: 'hc-hedged-medication',
    domain: 'healthcare',
    rule: 'a hedge waits as an inferred candidate',
    schema: S,
    calls: [[{ role: 'user', text: 'I am taking metformin.', at: at('01-05') }], [{ role: 'user', text: 'I think maybe the doctor prescribed glimepiride.', at: at('01-12') }]],
    timeline: {
      medication: [
        ['metformin', 'active', 'explicit'],
        ['glimepiride', 'active', 'inferred'],
      ],
    },
    context: { facts: { medication: 'metformin' }, possibly: { medication: 'glimepiride' } },
    search: { query: 'Which medication is the patient on?', firstHas: 'metformin', source: 'fact' },
  },
  {
    id: 'hc-recent-turn-search',
    domain: 'healthcare',
    rule: 'search finds a kept turn no field holds',
    schema: S,
    calls: [[{ role: 'user', text: 'The lab report came back and my cholesterol was high.', at: at('01-05') }]],
    context: { blockHas: ['cholesterol was high'] },
    search: { query: 'cholesterol lab report', firstHas: 'cholesterol', source: 'recent' },
  },
  {
    id: 'hc-stopped-medication',
    domain: 'healthcare',
    rule: 'a value that no longer holds is history (now: null)',
    schema: S,
    calls: [[{ role: 'user', text: 'I am taking metformin.', at: at('01-05') }], [{ role: 'user', text: 'I stopped taking metformin last week.', at: at('02-05') }]],
    timeline: { medication: [['metformin', 'superseded']] },
    context: { factsLack: ['medication'] },
  },
  {
    id: 'hc-appointment-moved',
    domain: 'healthcare',
    rule: 'a rescheduled ephemeral value supersedes the old one',
    schema: S,
    calls: [
      [{ role: 'user', text: 'My follow-up appointment is on 20 December at 4 pm.', at: at('12-01') }],
      [{ role: 'user', text: 'Please move my appointment to 22 December at 11 am.', at: at('12-02') }],
    ],
    timeline: {
      appointment: [
        ['2026-12-20T16:00:00.000Z', 'superseded'],
        ['2026-12-22T11:00:00.000Z', 'active'],
      ],
    },
    context: { facts: { appointment: '2026-12-22T11:00:00.000Z' } },
    search: { query: 'When is the appointment?', firstHas: '2026-12-22', source: 'fact', outdated: { has: '20 December', now: '2026-12-22T11:00:00.000Z' } },
  },
];
