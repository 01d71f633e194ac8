import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExtractionSchema } from '../../src/core/extraction-schema.ts';
import { http } from '../gateway/support/ws-tester.ts';
import { ScriptedUser, startTestServer, type TestServer } from './support.ts';

/**
 * The extraction half of the memory-semantics contract end to end on the embedded default
 * (offline extractor): what the extractor emits for corrections, self-corrections,
 * relative-time moves, spoken amounts and several keyed values, as the timeline shows it.
 */
let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.close());

const schema: ExtractionSchema = {
  fields: [
    { name: 'full_name', category: 'profile', type: 'string', description: "The caller's full name", hints: ['my name is'] },
    { name: 'city', category: 'temporal', type: 'string', description: 'City the caller lives in', hints: ['i live in', 'moved to', 'based in'] },
    { name: 'date_of_birth', category: 'profile', type: 'date', description: "The caller's date of birth", hints: ['date of birth', 'born on'] },
    { name: 'budget', category: 'temporal', type: 'money', description: 'Monthly rent budget', hints: ['budget', 'afford'] },
    { name: 'offered_rent', category: 'temporal', type: 'money', description: 'Rent the caller offers for a flat, in INR', hints: ['offer'], keyBy: 'property' },
  ],
};

async function user(): Promise<ScriptedUser> {
  const u = new ScriptedUser(srv);
  const r = await http(srv.base, 'PUT', `/v1/agents/${u.agentId}/schema`, { body: schema });
  if (r.status !== 200) throw new Error(`schema PUT failed: ${JSON.stringify(r.body)}`);
  return u;
}
const history = (tl: Array<Record<string, any>>, field: string) => tl.filter((e) => e.field === field).map((e) => [e.value, e.status]);

describe('extraction semantics over HTTP', () => {
  it('"Actually I moved to Mysore last month" retracts Chennai; Mysore is current, dated a month back', async () => {
    const u = await user();
    await u.call([
      { role: 'agent', text: 'Where are you based?', at: '2026-03-10T10:00:00Z' },
      { role: 'user', text: 'I live in Chennai.', at: '2026-03-10T10:00:05Z' },
      { role: 'agent', text: 'Nice.', at: '2026-03-10T10:00:10Z' },
      { role: 'user', text: 'Actually I moved to Mysore last month.', at: '2026-03-10T10:00:20Z' },
    ]);
    const tl = await u.timeline();
    expect(history(tl, 'city')).toEqual([
      ['Chennai', 'retracted'],
      ['Mysore', 'active'],
    ]);
    expect(tl.find((e) => e.value === 'Mysore')?.validFrom).toBe('2026-02-10T00:00:00.000Z');
    const ctx = await u.nextContext();
    expect(ctx.facts.filter((f: any) => f.field === 'city').map((f: any) => f.value)).toEqual(['Mysore']);
  });

  it('a self-corrected date of birth stores only the corrected day', async () => {
    const u = await user();
    await u.call([{ role: 'user', text: 'My date of birth is 12 March 1990, sorry, I meant 21 March 1990.', at: '2026-03-10T10:00:00Z' }]);
    expect(history(await u.timeline(), 'date_of_birth')).toEqual([['1990-03-21', 'active']]);
  });

  it('"I moved to Hyderabad two weeks ago" in a later call supersedes Pune', async () => {
    const u = await user();
    await u.call([{ role: 'user', text: "I'm based in Pune.", at: '2026-01-05T10:00:00Z' }]);
    await u.call([{ role: 'user', text: 'I moved to Hyderabad two weeks ago.', at: '2026-03-10T10:00:00Z' }]);
    const tl = await u.timeline();
    expect(history(tl, 'city')).toEqual([
      ['Pune', 'superseded'],
      ['Hyderabad', 'active'],
    ]);
    expect(tl.find((e) => e.value === 'Pune')?.validUntil).toBe('2026-02-24T00:00:00.000Z');
  });

  it('"Around 40 thousand rupees." answering the budget question is ₹40,000', async () => {
    const u = await user();
    await u.call([
      { role: 'agent', text: 'What budget do you have in mind?', at: '2026-03-10T10:00:00Z' },
      { role: 'user', text: 'Around 40 thousand rupees.', at: '2026-03-10T10:00:05Z' },
    ]);
    expect(history(await u.timeline(), 'budget')).toEqual([[{ amount: 40_000, currency: 'INR' }, 'active']]);
  });

  it('two properties priced in one turn become two entities', async () => {
    const u = await user();
    await u.call([{ role: 'user', text: 'I can offer 30,000 for the MG Road flat and 45,000 for the Indiranagar one.', at: '2026-03-10T10:00:00Z' }]);
    const tl = await u.timeline();
    expect(tl.filter((e) => e.field === 'offered_rent').map((e) => [e.key, e.value.amount, e.status])).toEqual([
      ['offered_rent:mg road', 30_000, 'active'],
      ['offered_rent:indiranagar', 45_000, 'active'],
    ]);
  });
});
