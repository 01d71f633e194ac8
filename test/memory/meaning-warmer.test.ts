import { describe, expect, it } from 'vitest';
import type { CosineScale, Embedder } from '../../src/ports/embedder.ts';
import { MeaningWarmer } from '../../src/memory/meaning-warmer.ts';
import { fieldText, SemanticTiers } from '../../src/memory/semantic-tiers.ts';

const SCALE: CosineScale = { meaning: true, floor: 0.2, strong: 0.4 };

/**
 * A fake clock the warm queue measures and rests on: each embed call "takes" `costMs`, each rest
 * moves the clock by what it waits. Records every call (texts, start time) and every rest.
 */
function harness(costMs = 10) {
  let clock = 0;
  const calls: Array<{ at: number; texts: string[] }> = [];
  const rests: number[] = [];
  const embedder: Embedder = {
    id: 'fake',
    dimensions: 2,
    cosineScale: SCALE,
    async embed(texts) {
      calls.push({ at: clock, texts: [...texts] });
      clock += costMs;
      return texts.map(() => Float32Array.from([1, 0]));
    },
  };
  const tiers = SemanticTiers.for(embedder)!;
  const options = {
    now: () => clock,
    sleep: async (ms: number) => {
      rests.push(ms);
      clock += ms;
      // A real tick, as the default sleep has: the queue never starts a batch inside `add`.
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
  return { tiers, calls, rests, options };
}

describe('MeaningWarmer', () => {
  it('embeds appended turns newest first, in batches, after the ack: add only queues', async () => {
    const h = harness();
    const warmer = new MeaningWarmer(h.tiers, { share: 1, batch: 2, ...h.options });
    for (const t of ['one', 'two', 'three']) warmer.addTurn(t);
    expect(h.calls).toEqual([]);
    await warmer.idle();
    expect(h.calls.map((c) => c.texts)).toEqual([['three', 'two'], ['one']]);
    expect(['one', 'two', 'three'].every((t) => h.tiers.has('turn', t))).toBe(true);
    expect(warmer.stats()).toEqual({ queued: 0, embedded: 3, dropped: 0 });
  });

  it('warms nothing while turns come at over twice what its share can embed, and resumes when they slow', async () => {
    const h = harness(10); // 5 ms a text in batches of 2; share 0.1: 20 texts/s
    const warmer = new MeaningWarmer(h.tiers, { share: 0.1, batch: 2, ...h.options });
    warmer.addTurn('first');
    warmer.addTurn('second');
    await warmer.idle(); // measured: 5 ms a text
    // A second of 100 turns (5x what the share embeds): the next second's turns are not queued.
    const clockAt = () => h.options.now();
    const burstStart = clockAt();
    for (let i = 0; i < 100; i++) warmer.addTurn(`burst ${i}`);
    await h.options.sleep(Math.max(0, burstStart + 1000 - clockAt()));
    for (let i = 0; i < 10; i++) warmer.addTurn(`late ${i}`);
    expect(warmer.stats().queued).toBe(0);
    await warmer.idle();
    expect(h.tiers.has('turn', 'late 9')).toBe(false);
    // A quiet second later (10 turns a second): warming again.
    await h.options.sleep(2000);
    warmer.addTurn('calm');
    await warmer.idle();
    expect(h.tiers.has('turn', 'calm')).toBe(true);
  });

  it('keeps at most maxQueued texts: the oldest are dropped', async () => {
    const h = harness();
    const warmer = new MeaningWarmer(h.tiers, { share: 1, batch: 1, maxQueued: 3, ...h.options });
    for (const t of ['t1', 't2', 't3', 't4', 't5']) warmer.addTurn(t);
    expect(warmer.stats()).toMatchObject({ queued: 3, dropped: 2 });
    await warmer.idle();
    expect(h.calls.map((c) => c.texts[0])).toEqual(['t5', 't4', 't3']);
    expect(h.tiers.has('turn', 't1')).toBe(false);
  });

  it('spends at most its share of the encoder: after a batch of t ms it rests t·(1/share − 1)', async () => {
    const h = harness(10);
    const warmer = new MeaningWarmer(h.tiers, { share: 0.1, batch: 2, ...h.options });
    for (let i = 0; i < 6; i++) warmer.addTurn(`turn ${i}`);
    await warmer.idle();
    // Three batches of 10 ms, each starting 10 / 0.1 = 100 ms after the previous one did.
    expect(h.calls.map((c) => c.at)).toEqual([0, 100, 200]);
    expect(h.rests.filter((ms) => ms > 0).slice(0, 2)).toEqual([90, 90]);
    // A turn appended during the rest waits for it: the budget holds across arrivals.
    warmer.addTurn('late');
    await warmer.idle();
    expect(h.calls.at(-1)).toEqual({ at: 300, texts: ['late'] });
    warmer.close();
  });

  it('skips what is cached (no batch, no rest) and warms a schema once per field text', async () => {
    const h = harness();
    const warmer = new MeaningWarmer(h.tiers, { share: 0.5, ...h.options });
    const schema = { fields: [{ name: 'budget', category: 'temporal' as const, type: 'money' as const, description: 'Total budget' }] };
    warmer.addFields(schema);
    await warmer.idle();
    warmer.addFields(schema);
    warmer.addTurn('  ');
    expect(warmer.stats().queued).toBe(0);
    await h.tiers.vectors({ fields: [] }, [{ turnId: 't', seq: 1, sessionId: 's', role: 'user', text: 'said', ts: 1, receivedAt: 1, tokens: 1 }]);
    warmer.addTurn('said');
    await warmer.idle();
    expect(h.calls.map((c) => c.texts)).toEqual([[fieldText(schema.fields[0]!)], ['said']]);
    warmer.close();
  });

  it('drops its queue on close', async () => {
    const h = harness();
    const warmer = new MeaningWarmer(h.tiers, { share: 1, ...h.options });
    warmer.addTurn('never');
    warmer.close();
    await warmer.idle();
    warmer.addTurn('after');
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.calls).toEqual([]);
  });

  it('refuses a share outside (0, 1]', () => {
    const h = harness();
    expect(() => new MeaningWarmer(h.tiers, { share: 0 })).toThrow(RangeError);
    expect(() => new MeaningWarmer(h.tiers, { share: 1.5 })).toThrow(RangeError);
  });
});
