/**
 * What search by meaning costs on a 40-turn buffer with the fused embedder (the default): with
 * the warm queue on (the search comes after the appends were warmed) and off (the first search
 * embeds within `memory.meaningWaitMs`). Rough, one user, one process; prints tookMs per search
 * and, to read them by, what one query embedding alone took at the end.
 * Run: npx tsx scripts/measure-meaning-wait.ts <meaningWarmShare> <meaningWaitMs>   e.g. 0.1 30, 0 30
 */
import { createRuntime } from '../src/app/wiring.ts';
import { defaultConfig } from '../src/config/config-schema.ts';

const lines = [
  'Hi, I am calling about the flats you listed last week.',
  'Sure, which locality are you interested in?',
  'Somewhere close to Indiranagar, maybe Domlur.',
  'How many bedrooms do you need?',
  'Three bedrooms, my parents are moving in with us.',
  'Got it. And what budget are you working with?',
  'We can go up to one crore twenty, not more.',
  'Do you need parking?',
  'Yes, two covered spots, we have two cars.',
  'Any preference on the floor?',
  'Not the ground floor, my mother worries about damp.',
  'Would you consider a resale property?',
  'Resale is fine if it is less than ten years old.',
  'When are you hoping to move?',
  'Ideally before the school year starts in June.',
  'Do you have a home loan sanctioned?',
  'The bank approved eighty lakhs last month.',
  'Is a gated community important?',
  'Yes, security matters, we travel a lot.',
  'What about a gym or a pool?',
  'A pool would be nice for the kids but not essential.',
  'Any facing you prefer?',
  'East facing, my wife is particular about that.',
  'How far from the metro is acceptable?',
  'Walking distance, ten minutes at most.',
  'Would you like to schedule site visits?',
  'This Saturday morning works for us.',
  'Shall I include Koramangala options too?',
  'Only if they are within budget.',
  'Do you work from home?',
  'Two days a week, so a study room helps.',
  'Any pets?',
  'One small dog, so the society must allow pets.',
  'Anything else I should know?',
  'My father uses a wheelchair, the building needs a lift.',
  'Noted, lift access is a must.',
  'Also we would like a balcony facing the garden.',
  'I will send a shortlist tonight.',
  'Please also send the maintenance charges.',
  'Will do. Thanks for calling!',
];

async function run(share: number, waitMs: number) {
  const config = defaultConfig({ sqlite: { path: ':memory:' }, log: { level: 'silent' }, adapters: { embedder: 'fused' }, memory: { meaningWarmShare: share, meaningWaitMs: waitMs } });
  const rt = await createRuntime(config);
  await rt.ports.embedder.warm?.();
  const svc = rt.service;
  const scope = { tenantId: 'default', agentId: 'real-estate', userId: `u${Math.random()}` };
  const { sessionId } = await svc.startSession(scope);
  const t0 = performance.now();
  for (const [i, text] of lines.entries()) await svc.appendTurn(scope, sessionId, { role: i % 2 ? 'agent' : 'user', text, ts: Date.now() - (lines.length - i) * 5000 });
  const appendMs = performance.now() - t0;
  const w0 = performance.now();
  await svc.meaningIdle();
  const warmMs = performance.now() - w0;
  const qs = ['where do they want to live', 'how much can they spend', 'does the building need an elevator', 'what pets do they have', 'when do they want to move'];
  const first = (await svc.search(scope, qs[0]!)).tookMs;
  const second = (await svc.search(scope, qs[1]!)).tookMs;
  // Whatever the first search left embedding (its chain, or the warm queue) finishes before the repeated ones.
  await new Promise((r) => setTimeout(r, 4000));
  await svc.meaningIdle();
  const repeated: number[] = [];
  for (const q of qs.slice(2)) repeated.push((await svc.search(scope, q)).tookMs);
  const c0 = performance.now();
  await rt.ports.embedder.embed(['a query nobody asked before ' + Math.random()]);
  const queryMs = performance.now() - c0;
  console.log(
    `share=${share} wait=${waitMs}: appends ${appendMs.toFixed(0)} ms, warm idle after ${warmMs.toFixed(0)} ms; first ${first.toFixed(1)}, second ${second.toFixed(1)}, repeated ${repeated.map((x) => x.toFixed(1)).join(', ')} ms (one query embedding alone: ${queryMs.toFixed(1)} ms)`,
  );
  await new Promise((r) => setTimeout(r, 800)); // let the first search's leftover embedding finish before closing
  await rt.close();
}
const [share = 0.1, wait = 30] = process.argv.slice(2).map(Number);
const keep = setInterval(() => undefined, 1000); // the warm queue's rests are unref'd timers
await run(share!, wait!);
clearInterval(keep);
