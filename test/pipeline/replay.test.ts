import { describe, expect, it } from 'vitest';
import { replay } from '../../src/app/replay.ts';
import { testConfig } from '../support/config.ts';

// The README's demonstration, end to end on the embedded default (offline extractor and embedder).
describe('memgate replay of the bundled real-estate example', () => {
  it('shows the old budget superseded, only the new one in the next context block, and answers searches', async () => {
    const out: string[] = [];
    const progress: string[] = [];
    await replay('config/examples/real-estate-calls.json', testConfig({ sqlite: { path: ':memory:' }, log: { level: 'silent' } }), {
      out: (l) => out.push(l),
      progress: (l) => progress.push(l),
    });
    const text = out.join('\n');
    const block = text.slice(text.indexOf('Next call: context block'), text.indexOf('Bi-temporal timeline'));
    const timeline = text.slice(text.indexOf('Bi-temporal timeline'), text.indexOf('memory_search'));

    expect(progress).toHaveLength(3);
    expect(progress[2]).toMatch(/call 3\/3 \[#+\] 23\/23 turns/);
    // The current budget is asserted; the old one is not presented as current.
    expect(block).toMatch(/Rajiv Kumar/);
    const current = block.slice(block.indexOf('## Current facts'), block.indexOf('## Possibly'));
    expect(current).toMatch(/^- budget: ₹80 lakh/m);
    expect(current).not.toMatch(/50/);
    expect(block).not.toMatch(/^- budget[^\n]*50/m);
    // The timeline keeps both budgets: the old one superseded, the new one active.
    const budgetRows = timeline.split('\n').filter((l) => /^\s+budget\s/.test(l));
    expect(budgetRows).toHaveLength(2);
    expect(budgetRows[0]).toMatch(/50.*superseded/);
    expect(budgetRows[1]).toMatch(/80.*active/);
    // The first site visit has expired: still in the timeline, hidden from the block.
    expect(timeline).toMatch(/site_visit/);
    const bank = text.slice(text.indexOf('memory_search "Which bank'));
    expect(bank.split('\n').slice(1, 4).join('\n')).toMatch(/HDFC/);
  });
});
