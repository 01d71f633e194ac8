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
    await expect(tiers.vectors({ fields: [] }, [turn(2)])).rejects.toThrow('encoder down');
    await tiers.vectors({ fields: [] }, [turn(2)]);
    expect(e.embedded).toEqual(['turn 1', 'turn 2']);
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
