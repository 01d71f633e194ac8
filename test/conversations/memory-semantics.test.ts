import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeWithServer } from '../support/servers.ts';
import { ScriptedUser, startProductionTestServer, startTestServer, type TestServer } from './support.ts';

/**
 * The memory-semantics contract (docs/protocol.md) as conversations, on the embedded default and on
 * Redis + NATS (buffer, cache, lock, bus and events on the real servers): calls in over HTTP,
 * then the timeline, the next call's context and search checked out.
 */
describe('memory semantics on the embedded default', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer();
  });
  afterAll(() => srv.close());
  conversations(() => srv);
});

describeWithServer('redis', 'memory semantics on Redis + NATS', (redisUrl) => {
  describeWithServer('nats', 'memory semantics on Redis + NATS', (natsUrl) => {
    let srv: TestServer;
    beforeAll(async () => {
      srv = await startProductionTestServer(redisUrl, natsUrl, 'mgconv');
    });
    afterAll(() => srv.close());
    conversations(() => srv);
  });
});

const lakh = (n: number) => ({ amount: n * 100_000, currency: 'INR' });
const values = (entities: Array<Record<string, any>>, field: string) => entities.filter((e) => e.field === field).map((e) => [e.value, e.status]);

function conversations(server: () => TestServer): void {
  describe('a budget that changes between calls', () => {
    it('search puts the current budget first, marks the old one outdated, and the summary is annotated', async () => {
      const u = new ScriptedUser(server());
      await u.useSchema('real-estate');
      await u.call([
        { role: 'agent', text: 'Hello, thanks for calling Skyline Homes. What budget do you have in mind?', at: '2026-01-05T10:00:00Z' },
        { role: 'user', text: 'My budget is 50 lakhs for a 2BHK in Whitefield.', at: '2026-01-05T10:00:10Z' },
        { role: 'agent', text: 'Noted, 50 lakhs. Any preferred location?', at: '2026-01-05T10:00:20Z' },
        { role: 'user', text: 'Whitefield or nearby, close to the metro.', at: '2026-01-05T10:00:30Z' },
        { role: 'agent', text: 'I will shortlist a few options near the metro.', at: '2026-01-05T10:00:40Z' },
        { role: 'user', text: 'Thanks, please send them over email.', at: '2026-01-05T10:00:50Z' },
        { role: 'agent', text: 'Will do. Talk soon.', at: '2026-01-05T10:01:00Z' },
      ]);
      await u.call([
        { role: 'user', text: 'Good news, the bank approved 80 lakhs, my budget is now 80 lakhs.', at: '2026-02-10T09:00:00Z' },
        { role: 'agent', text: 'Congratulations! That opens up 3BHK options.', at: '2026-02-10T09:00:10Z' },
      ]);
      const tl = await u.timeline();
      expect(values(tl, 'budget')).toEqual([
        [lakh(50), 'superseded'],
        [lakh(80), 'active'],
      ]);

      const ctx = await u.nextContext();
      expect(ctx.facts.filter((f: any) => f.field === 'budget').map((f: any) => f.value)).toEqual([lakh(80)]);
      // Whatever still states 50 lakhs does so only as marked history.
      for (const line of (ctx.contextBlock as string).split('\n').filter((l) => /50 lakh/i.test(l))) expect(line).toContain('[outdated: budget is now ₹80 lakh');

      const results = await u.search('What budget was approved by the bank?');
      expect(results[0]).toMatchObject({ source: 'fact', fact: { key: 'budget', value: lakh(80), status: 'active' } });
      expect(results[0]).not.toHaveProperty('outdated');
      for (const r of results.filter((x) => /50 lakh/i.test(x.text) && !/80 lakh/i.test(x.text))) expect(r.outdated).toEqual({ key: 'budget', now: lakh(80) });

      const january = await u.search('What was the budget?', { asOf: '2026-01-31T00:00:00Z' });
      expect(january[0]).toMatchObject({ source: 'fact', fact: { key: 'budget', value: lakh(50) } });
      expect(january.some((r) => r.fact?.value?.amount === 8_000_000)).toBe(false);
    });
  });

  describe('search before anything is compressed', () => {
    it('a short call is searchable: the fact first, then the turn that said it', async () => {
      const u = new ScriptedUser(server());
      await u.useSchema('real-estate');
      await u.call([
        { role: 'user', text: 'Hi, my budget is 65 lakhs.', at: '2026-03-01T10:00:00Z' },
        { role: 'agent', text: 'Got it, 65 lakhs.', at: '2026-03-01T10:00:05Z' },
      ]);
      const results = await u.search('what is the budget?');
      expect(results[0]).toMatchObject({ source: 'fact', confidence: 'high', fact: { key: 'budget', value: lakh(65), status: 'active' } });
      expect(results.some((r) => r.source === 'recent' && /65 lakhs/.test(r.text))).toBe(true);
    });
  });

  describe('confidence order', () => {
    it('a misheard turn waits under possibly beside the confirmed value', async () => {
      const u = new ScriptedUser(server());
      await u.useSchema('real-estate');
      await u.call([
        { role: 'user', text: 'My budget is 80 lakhs.', at: '2026-04-01T10:00:00Z' },
        { role: 'agent', text: 'Just to confirm, your budget is 80 lakhs?', at: '2026-04-01T10:00:05Z' },
        { role: 'user', text: 'Yes, that is right.', at: '2026-04-01T10:00:10Z' },
      ]);
      await u.call([{ role: 'user', text: 'My budget is 18 lakhs.', at: '2026-04-05T10:00:00Z', asrConfidence: 0.35 }]);
      const ctx = await u.nextContext();
      expect(ctx.facts.filter((f: any) => f.field === 'budget').map((f: any) => f.value)).toEqual([lakh(80)]);
      expect(ctx.possibly.filter((f: any) => f.field === 'budget').map((f: any) => [f.value, f.source])).toEqual([[lakh(18), 'inferred']]);
      const results = await u.search('what is the budget');
      expect(results[0]?.fact).toMatchObject({ value: lakh(80), status: 'active' });
    });
  });
}
