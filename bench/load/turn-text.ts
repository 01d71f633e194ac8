/**
 * Synthetic voice-call turns for the load benches: short spoken sentences of
 * the length a telephony pipeline sends (10–40 words), alternating caller and
 * agent, with names, numbers and dates so the extraction lane has real work.
 * Deterministic from a seed so every run and every baseline sends the same bytes.
 */

const NAMES = ['Rajiv Kumar', 'Ananya Rao', 'Maria Lopez', 'Tom Becker', 'Aisha Khan', 'Li Wei', 'Sofia Rossi', 'James Carter'];
const CITIES = ['Whitefield', 'Koramangala', 'Indiranagar', 'Austin', 'Lisbon', 'Munich', 'Pune', 'Hyderabad'];
const USER_LINES = [
  'Hi, this is {name}, I am calling about the three bedroom flat I saw online last week.',
  'My budget is around {n} lakhs but I was just approved for a bit more by the bank.',
  'I live in {city} right now and I would like to stay close to my office there.',
  'Can we do the site visit on Saturday morning, maybe around ten thirty?',
  'My wife prefers a higher floor, and we really need parking for two cars.',
  'Actually the loan came through, we are approved for {n} lakhs now, so we can look at bigger places.',
  'I work as a software engineer, so I mostly work from home three days a week.',
  'Please call me back tomorrow after six in the evening, I am in meetings all day.',
  'Is the society pet friendly? We have a golden retriever called Bruno.',
  'We are moving from {city} in March because my daughter starts school there.',
];
const AGENT_LINES = [
  'Thanks {first}, I have noted that. Let me check what is available in {city} within that range.',
  'Sure, I can book the site visit for Saturday at ten thirty. Shall I send the address by SMS?',
  'The flat on the twelfth floor has two covered parking slots and a clubhouse.',
  'Understood. With an approved loan of {n} lakhs you could also consider the villa project nearby.',
  'I will call you back tomorrow after six. Is this the best number to reach you?',
  'Yes, the society allows pets, and there is a small park right next to the tower.',
  'Great, I have updated your preferences: three bedrooms, high floor, two parking slots.',
  'Let me summarise: budget, location near your office, and a visit this Saturday. Did I get that right?',
];

/** A tiny deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One synthetic turn. */
export interface SyntheticTurn {
  role: 'user' | 'agent';
  text: string;
  speaker: string;
}

/** The `i`-th turn of call `callIndex`: caller on even turns, agent on odd ones. */
export function syntheticTurn(callIndex: number, i: number): SyntheticTurn {
  const rnd = prng(callIndex * 7919 + i * 104729 + 1);
  const name = NAMES[callIndex % NAMES.length]!;
  const fill = (line: string) =>
    line
      .replace('{name}', name)
      .replace('{first}', name.split(' ')[0]!)
      .replace('{city}', CITIES[Math.floor(rnd() * CITIES.length)]!)
      .replace('{n}', String(40 + Math.floor(rnd() * 60)));
  if (i % 2 === 0) return { role: 'user', text: fill(USER_LINES[Math.floor(rnd() * USER_LINES.length)]!), speaker: name };
  return { role: 'agent', text: fill(AGENT_LINES[Math.floor(rnd() * AGENT_LINES.length)]!), speaker: 'Priya' };
}
