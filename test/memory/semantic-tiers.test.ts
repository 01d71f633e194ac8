import { describe, expect, it } from 'vitest';
import type { ExtractionSchema } from '../../src/core/extraction-schema.ts';
import type { Turn } from '../../src/core/types.ts';
import type { CosineScale, Embedder } from '../../src/ports/embedder.ts';
import { LruMap } from '../../src/memory/lru-map.ts';
import { fieldText, SemanticTiers } from '../../src/memory/semantic-tiers.ts';

const SCALE: CosineScale = { meaning: true, floor: 0.2, strong: 0.4 };

/** Records every text it embeds; `fail` rejects the next call. */
class RecordingEmbedder implements Embedder {
  readonly id = 'recording';
  readonly dimensions = 2;
  readonly embedded: string[] = [];
  fail = false;
  constructor(readonly cosineScale?: CosineScale) {}
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (this.fail) {
      this.fail = false;
      throw new Error('encoder down');
    }
    this.embedded.push(...texts);
    return texts.map(() => Float32Array.from([1, 0]));
  }
}

/**
 * Holds every call after the first (the "model load") until the test opens the gate: a search's
 * wait runs out while the encoder is busy, deterministically. `asked`: the texts of every call, in order.
 */
class GatedEmbedder implements Embedder {
  readonly id = 'gated';
  readonly dimensions = 2;
  readonly cosineScale = SCALE;
  readonly asked: string[] = [];
  private shut = false;
  private readonly held: Array<() => void> = [];
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.asked.push(...texts);
    if (this.shut) {
      await new Promise<void>((resolve) => this.held.push(resolve));
    }
    return texts.map(() => Float32Array.from([1, 0]));
  }
  /** Let held calls through (and the calls they lead to), run `f` with the gate open, then shut it. */
  async open(f: () => Promise<unknown>): Promise<void> {
    this.shut = false;
    for (let r = this.held.shift(); r; r = this.held.shift()) {
      r();
      // The chunk after it is asked for once this one settles.
      await new Promise((resolve) => setImmediate(resolve));
    }
    await f();
    this.shut = true;
  }
}

const schema: ExtractionSchema = {
  fields: [
    { name: 'preferred_location', category: 'temporal', type: 'string', description: 'Area the caller wants to buy in', hints: ['looking in', 'near'] },
    { name: 'budget', category: 'temporal', type: 'money', description: 'Total budget' },
  ],
};
const turn = (seq: number, text = `turn ${seq}`): Turn => ({ turnId: `t${seq}`, seq, sessionId: 's', role: 'user', text, ts: 1_000 * seq, receivedAt: 1_000 * seq, tokens: 3 });

describe('SemanticTiers', () => {
  it('is off for an embedder whose cosine is word overlap or unknown', () => {
    expect(SemanticTiers.for(new RecordingEmbedder())).toBeNull();
    expect(SemanticTiers.for(new RecordingEmbedder({ ...SCALE, meaning: false }))).toBeNull();
    expect(SemanticTiers.for(new RecordingEmbedder(SCALE))).not.toBeNull();
  });

  it('describes a field by its name words, description and hints', () => {
    expect(fieldText(schema.fields[0]!)).toBe('preferred location: Area the caller wants to buy in (looking in, near)');
    expect(fieldText(schema.fields[1]!)).toBe('budget: Total budget');
  });

  it('embeds fields once per schema text and each turn once, in one call per search', async () => {
    const e = new RecordingEmbedder(SCALE);
    const tiers = SemanticTiers.for(e)!;
    const first = await tiers.vectors(schema, [turn(1), turn(2)]);
    expect([...first.fields.keys()]).toEqual(['preferred_location', 'budget']);
    expect([...first.turns.keys()].sort()).toEqual(['t1', 't2']);
    expect(e.embedded).toHaveLength(4);
    await tiers.vectors(schema, [turn(1), turn(2), turn(3)]);
    expect(e.embedded.slice(4)).toEqual(['turn 3']);
  });

  it('embeds the newest maxTurns turns only, one per turn id, none blank', async () => {
    const e = new RecordingEmbedder(SCALE);
    const tiers = SemanticTiers.for(e, { maxTurns: 2 })!;
    const v = await tiers.vectors({ fields: [] }, [turn(1), turn(3), turn(2), turn(3), turn(4, '  ')]);
    expect([...v.turns.keys()]).toEqual(['t3', 't2']);
    expect(e.embedded).toEqual(['turn 3', 'turn 2']);
  });

  it('shares a text in flight between concurrent searches, and forgets a failed one', async () => {
    const e = new RecordingEmbedder(SCALE);
    const tiers = SemanticTiers.for(e)!;
    await Promise.all([tiers.vectors({ fields: [] }, [turn(1)]), tiers.vectors({ fields: [] }, [turn(1)])]);
    expect(e.embedded).toEqual(['turn 1']);
    e.fail = true;
    // The encoder down: the turn is left out (matched by words), not cached, tried again next time.
    expect([...(await tiers.vectors({ fields: [] }, [turn(2)])).turns.keys()]).toEqual([]);
    expect([...(await tiers.vectors({ fields: [] }, [turn(2)])).turns.keys()]).toEqual(['t2']);
    expect(e.embedded).toEqual(['turn 1', 'turn 2']);
  });

  it('answers within the wait with what is cached; the chunk in flight fills the cache, the next search embeds the rest', async () => {
    const e = new GatedEmbedder();
    const tiers = SemanticTiers.for(e, { chunk: 1 })!;
    await e.open(() => tiers.vectors(schema, [turn(1)]));
    // The gate is shut: without the cap this search would never answer.
    const first = await tiers.vectors(schema, [turn(1), turn(2), turn(3)], 5);
    expect([...first.turns.keys()]).toEqual(['t1']);
    expect([...first.fields.keys()]).toEqual(['preferred_location', 'budget']);
    // Newest first, one text a call: turn 3 went to the encoder, turn 2 waited for it.
    expect(e.asked.slice(3)).toEqual(['turn 3']);
    await e.open(() => Promise.resolve());
    // Past the wait nothing more is sent (no warm queue here): the chain would hold the encoder for other searches' queries.
    expect(e.asked.slice(3)).toEqual(['turn 3']);
    const later = await tiers.vectors(schema, [turn(1), turn(2), turn(3)], 5);
    expect([...later.turns.keys()].sort()).toEqual(['t1', 't3']);
    expect(e.asked.slice(3)).toEqual(['turn 3', 'turn 2']);
  });

  it('hands what the wait left unembedded to the warm queue, most wanted last, instead of embedding it on', async () => {
    const e = new GatedEmbedder();
    const tiers = SemanticTiers.for(e, { chunk: 1 })!;
    const handed: string[] = [];
    tiers.handLeftoversTo((texts) => handed.push(...texts.map((t) => `${t.kind}:${t.text}`)));
    await e.open(() => Promise.resolve());
    await tiers.vectors({ fields: [] }, [turn(1), turn(2), turn(3)], 5);
    expect(e.asked).toEqual(['turn 3']);
    await e.open(() => Promise.resolve());
    // The chunk in flight went to the cache; the rest was never sent, and its slots are free for the queue.
    expect(e.asked).toEqual(['turn 3']);
    expect(handed).toEqual(['turn:turn 1', 'turn:turn 2']);
    expect([tiers.has('turn', 'turn 3'), tiers.has('turn', 'turn 2'), tiers.has('turn', 'turn 1')]).toEqual([true, false, false]);
  });

  it('warms texts into the caches: cached and in-flight ones cost nothing, blank ones are skipped', async () => {
    const e = new RecordingEmbedder(SCALE);
    const tiers = SemanticTiers.for(e)!;
    expect(
      await tiers.warm([
        { kind: 'turn', text: 'turn 1' },
        { kind: 'field', text: fieldText(schema.fields[1]!) },
        { kind: 'turn', text: ' ' },
      ]),
    ).toBe(2);
    expect([tiers.has('turn', 'turn 1'), tiers.has('field', 'budget: Total budget'), tiers.has('field', 'turn 1')]).toEqual([true, true, false]);
    expect(await tiers.warm([{ kind: 'turn', text: 'turn 1' }])).toBe(0);
    await tiers.vectors(schema, [turn(1)]);
    expect(e.embedded).toEqual(['turn 1', 'budget: Total budget', fieldText(schema.fields[0]!)]);
  });

  it('bounds its caches: the least recently used entry goes first', () => {
    const lru = new LruMap<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    lru.get('a');
    lru.set('c', 3);
    expect([lru.get('a'), lru.get('b'), lru.get('c'), lru.size]).toEqual([1, undefined, 3, 2]);
  });
});
