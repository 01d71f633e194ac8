/**
 * Synthetic Atomic Context Units for the search bench: self-contained facts in
 * the style stage 3 writes ("Maria Lopez (user) ... as of 2025-03-02"), varied
 * enough (people × topics × places × objects × dates) that 10,000 of them are
 * distinct, plus questions that name what a matching fact contains.
 */
import { prng } from './turn-text.ts';

const PEOPLE = ['Maria Lopez', 'Rajiv Kumar', 'Ananya Rao', 'Tom Becker', 'Aisha Khan', 'Li Wei', 'Sofia Rossi', 'James Carter', 'Priya Nair', 'Omar Haddad'];
const PLACES = ['Lisbon', 'Whitefield', 'Munich', 'Austin', 'Kyoto', 'Nairobi', 'Pune', 'Oslo', 'Cusco', 'Hyderabad', 'Vancouver', 'Marrakesh', 'Seville', 'Hanoi', 'Boulder'];
const TEMPLATES: Array<(p: string, place: string, n: number, thing: string) => string> = [
  (p, place, n) => `${p} (user) has a budget of ${n} lakhs for a flat in ${place}`,
  (p, place) => `${p} (user) moved to ${place} with family`,
  (p, place, _n, thing) => `${p} (user) bought a ${thing} while visiting ${place}`,
  (p, _place, n, thing) => `${p} (user) has owned a ${thing} for ${(n % 12) + 1} years`,
  (p, place) => `${p} (user) scheduled a site visit in ${place}`,
  (p, place, _n, thing) => `${p} (user) is learning to repair a ${thing} at a workshop in ${place}`,
  (p, place, n) => `${p} (user) ran a ${(n % 40) + 5} km charity race in ${place}`,
  (p, _place, _n, thing) => `${p} (user) gave a ${thing} to a neighbour as a birthday present`,
  (p, place, n) => `${p} (user) was approved for a home loan of ${n} lakhs by a bank in ${place}`,
  (p, place, _n, thing) => `${p} (user) lost a ${thing} on a train to ${place}`,
  (p, place) => `${p} (user) volunteers at an animal shelter in ${place} on weekends`,
  (p, place, _n, thing) => `${p} (user) painted a ${thing} for an exhibition in ${place}`,
];
const THINGS = [
  'guitar',
  'bicycle',
  'camera',
  'telescope',
  'sewing machine',
  'kayak',
  'violin',
  'espresso machine',
  'drone',
  'typewriter',
  'sailboat',
  'motorbike',
  'piano',
  'pottery wheel',
  'laptop',
  'watercolour set',
  'tent',
  'skateboard',
  'aquarium',
  'record player',
];

/** One synthetic ACU text with its world date. */
export interface SyntheticFact {
  text: string;
  validAt: string;
}

/** The i-th synthetic fact (deterministic). */
export function syntheticFact(i: number): SyntheticFact {
  const rnd = prng(i * 2654435761);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const date = new Date(Date.UTC(2023, 0, 1) + Math.floor(rnd() * 900) * 86_400_000);
  const day = date.toISOString().slice(0, 10);
  const text = `${pick(TEMPLATES)(pick(PEOPLE), pick(PLACES), 20 + Math.floor(rnd() * 180), pick(THINGS))} as of ${day} (note ${i}).`;
  return { text, validAt: date.toISOString() };
}

/** The i-th query: a question about some person, place and object (deterministic). */
export function syntheticQuery(i: number): string {
  const rnd = prng(i * 40503 + 17);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const forms = [
    () => `What did ${pick(PEOPLE)} buy in ${pick(PLACES)}?`,
    () => `Where does ${pick(PEOPLE)} volunteer?`,
    () => `What is ${pick(PEOPLE)}'s budget for a flat?`,
    () => `Did ${pick(PEOPLE)} get a home loan approved?`,
    () => `When did ${pick(PEOPLE)} lose the ${pick(THINGS)}?`,
    () => `Who painted a ${pick(THINGS)} for an exhibition?`,
    () => `Which race did ${pick(PEOPLE)} run in ${pick(PLACES)}?`,
  ];
  return pick(forms)();
}
