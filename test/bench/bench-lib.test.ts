import { describe, expect, it } from 'vitest';
import { Histogram } from '../../bench/lib/histogram.ts';
import { summarize } from '../../bench/lib/stats.ts';
import { below, figure } from '../../bench/lib/targets.ts';
import { parseFlags } from '../../bench/lib/cli.ts';
import { Bm25Index } from '../../bench/locomo/bm25.ts';
import { evidenceIds, parseLocomoDate, sessionsOf, turnText, type LocomoSample } from '../../bench/locomo/dataset.ts';
import { CategoryMeans, evidenceRecall } from '../../bench/locomo/recall.ts';
import { memgateFakeReplies } from '../../bench/load/fake-llm-replies.ts';
import { peerFakeReplies } from '../../bench/load/mem0-fake-replies.ts';

describe('Histogram', () => {
  it('reports percentiles within its bucket precision and exact extremes', () => {
    const h = new Histogram();
    for (let i = 1; i <= 10_000; i++) h.record(i); // 1 µs .. 10 ms, uniform
    expect(h.count).toBe(10_000);
    expect(h.minUs).toBe(1);
    expect(h.maxUs).toBe(10_000);
    for (const [p, exact] of [
      [50, 5000],
      [95, 9500],
      [99, 9900],
    ] as const) {
      const got = h.percentileUs(p);
      expect(Math.abs(got - exact) / exact).toBeLessThan(0.006);
    }
    expect(h.percentileUs(100)).toBe(10_000);
  });

  it('merges snapshots from several processes into the same distribution', () => {
    const a = new Histogram();
    const b = new Histogram();
    const all = new Histogram();
    for (let i = 0; i < 1000; i++) {
      const v = 50 + ((i * 7919) % 5000);
      (i % 2 === 0 ? a : b).record(v);
      all.record(v);
    }
    const merged = Histogram.from(JSON.parse(JSON.stringify(a.snapshot())));
    merged.merge(b.snapshot());
    expect(merged.count).toBe(all.count);
    for (const p of [50, 90, 99]) expect(merged.percentileUs(p)).toBe(all.percentileUs(p));
    expect(merged.maxUs).toBe(all.maxUs);
  });

  it('summarises in milliseconds with throughput over the window', () => {
    const h = new Histogram();
    for (let i = 0; i < 200; i++) h.recordMs(2);
    const s = summarize(h, 3, 10);
    expect(s.count).toBe(200);
    expect(s.errors).toBe(3);
    expect(s.throughputPerS).toBe(20);
    expect(Math.abs(s.p99Ms - 2) / 2).toBeLessThan(0.006);
  });
});

describe('figures and targets', () => {
  it('computes the ratio to the baseline and the target outcome', () => {
    const met = figure({ bench: 'b', metric: 'p99', value: 4, unit: 'ms', baseline: { label: 'echo', value: 2 }, target: below(10, 'p99 < 10 ms') });
    expect(met.ratio).toBe(2);
    expect(met.met).toBe(true);
    const missed = figure({ bench: 'b', metric: 'p99', value: 12, unit: 'ms', target: below(10, 'p99 < 10 ms') });
    expect(missed.met).toBe(false);
    expect(figure({ bench: 'b', metric: 'x', value: null, unit: '', target: below(1, 'x') }).met).toBe(false);
    expect(figure({ bench: 'b', metric: 'x', value: 1, unit: '', baseline: { label: 'zero', value: 0 } }).ratio).toBeNull();
  });
});

describe('bench flags', () => {
  it('parses profiles and suite lists, and refuses unknown flags', () => {
    const f = parseFlags(['--full', '--only', 'append,search', '--time-scale=0.5', '--locomo-convs', '2']);
    expect(f).toMatchObject({ full: true, only: ['append', 'search'], timeScale: 0.5, locomoConversations: 2 });
    expect(() => parseFlags(['--fulll'])).toThrow(/unknown flag/);
    expect(() => parseFlags(['--time-scale', '-1'])).toThrow(/positive/);
  });
});

describe('LoCoMo helpers', () => {
  it('parses session dates as UTC', () => {
    expect(new Date(parseLocomoDate('1:56 pm on 8 May, 2023')).toISOString()).toBe('2023-05-08T13:56:00.000Z');
    expect(new Date(parseLocomoDate('12:09 am on 13 September, 2023')).toISOString()).toBe('2023-09-13T00:09:00.000Z');
    expect(new Date(parseLocomoDate('12:30 pm on 1 January, 2024')).toISOString()).toBe('2024-01-01T12:30:00.000Z');
    expect(() => parseLocomoDate('yesterday')).toThrow(/unrecognised/);
  });

  it('pulls evidence ids out of malformed entries and drops a bare "D"', () => {
    expect(evidenceIds({ question: 'q', evidence: ['D8:6; D9:17'], category: 1 })).toEqual(['D8:6', 'D9:17']);
    expect(evidenceIds({ question: 'q', evidence: ['D'], category: 2 })).toEqual([]);
    expect(evidenceIds({ question: 'q', evidence: ['D1:3', 'D1:3'], category: 4 })).toEqual(['D1:3']);
  });

  it('finds sessions by their turn keys (not by date keys) and spaces turns in time', () => {
    const sample: LocomoSample = {
      sample_id: 'x',
      qa: [],
      conversation: {
        speaker_a: 'A',
        speaker_b: 'B',
        session_2: [{ speaker: 'B', dia_id: 'D2:1', text: 'later' }],
        session_2_date_time: '9:00 am on 2 May, 2023',
        session_1: [
          { speaker: 'A', dia_id: 'D1:1', text: 'hi' },
          { speaker: 'B', dia_id: 'D1:2', text: 'look', blip_caption: 'a dog on a beach' },
        ],
        session_1_date_time: '9:00 am on 1 May, 2023',
        session_3_date_time: '9:00 am on 3 May, 2023',
      },
    };
    const sessions = sessionsOf(sample);
    expect(sessions.map((s) => s.index)).toEqual([1, 2]);
    expect(sessions[0]!.turns[1]!.ts - sessions[0]!.turns[0]!.ts).toBe(20_000);
    expect(sessions[0]!.turns[1]!.text).toBe('look [shares a photo of a dog on a beach]');
    expect(turnText({ speaker: 'A', dia_id: 'D1:1', text: 'plain' })).toBe('plain');
  });

  it('ranks by BM25 and scores evidence recall per category', () => {
    const idx = new Bm25Index();
    idx.add('D1:1', 'I adopted a puppy named Bruno last week');
    idx.add('D1:2', 'The weather was nice at the beach');
    idx.add('D1:3', 'Bruno loves the beach and long walks');
    const hits = idx.search('What is the name of the puppy?', 2).map((h) => h.id);
    expect(hits[0]).toBe('D1:1');
    expect(idx.search('zebra', 5)).toEqual([]);
    expect(evidenceRecall(['D1:1', 'D1:3'], ['D1:1', 'D1:2'])).toBe(0.5);
    expect(evidenceRecall(['D1:1'], [])).toBe(0);
    const means = new CategoryMeans();
    means.add('1', 1);
    means.add('4', 0);
    expect(means.mean('overall')).toBe(0.5);
    expect(means.count('1')).toBe(1);
    expect(means.mean('3')).toBeNull();
  });
});

describe('fake LLM replies', () => {
  const turnLines = [
    JSON.stringify({ turnId: 't1', role: 'user', speaker: 'Maria', ts: '2026-01-01T00:00:00Z', text: 'I moved to Lisbon last month with my two kids' }),
    JSON.stringify({ turnId: 't2', role: 'agent', ts: '2026-01-01T00:00:20Z', text: 'ok' }),
  ].join('\n');

  it('answers memgate compression with one ACU per substantial turn, citing it', () => {
    const reply = memgateFakeReplies({
      model: 'm',
      messages: [{ role: 'user', content: `Segment:\n${turnLines}` }],
      response_format: { type: 'json_schema', json_schema: { name: 'atomic_context_units', schema: {} } },
    }) as { acus: Array<{ turnRefs: string[] }> };
    expect(reply.acus).toHaveLength(1);
    expect(reply.acus[0]!.turnRefs).toEqual(['t1']);
  });

  it('answers mem0 additive extraction with one memory per new message', () => {
    const prompt = '## New Messages\nuser: I moved to Lisbon last month with my two kids\nassistant: ok\n\n## Observation Date\n2026-01-01';
    const reply = peerFakeReplies({ model: 'm', messages: [{ role: 'user', content: prompt }], response_format: { type: 'json_object' } }) as {
      memory: Array<{ text: string; attributed_to: string }>;
    };
    expect(reply.memory).toEqual([{ id: '0', text: 'The user said: I moved to Lisbon last month with my two kids', attributed_to: 'user' }]);
  });
});
