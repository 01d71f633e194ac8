import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/app/wiring.ts';
import { replay } from '../../src/app/replay.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { createLogger } from '../../src/core/logger.ts';
import type { Scope, TurnInput } from '../../src/core/types.ts';
import { blockDefects } from '../../src/memory/block-check.ts';
import { SCENARIOS } from '../scenarios/catalog/index.ts';
import type { Scenario } from '../scenarios/types.ts';
import { testConfig } from '../support/config.ts';

/**
 * The context block as the agent's LLM reads it, kept as files a reviewer reads line by line
 * (test/conversations/blocks/): the next call's block after every scenario conversation, the
 * bundled real-estate example through `memgate replay`, and the two calls of `npm run demo`.
 * Each is played on a clock that follows the conversation's own times (the replay path), so the
 * files do not change with the day the test runs; each block must also pass the block checker.
 * A change to the files is a change to what agents say: review the diff, then `vitest -u`.
 */
const config = () => testConfig({ sqlite: { path: ':memory:' }, log: { level: 'silent' } });
const HOUR = 3_600_000;

interface Call {
  turns: Array<TurnInput & { ts: number }>;
}

/** Play calls through the service (start, turns, end, flush) and return every block: each call's start and the next call's, an hour after the last turn. */
async function play(schema: unknown, calls: readonly Call[], agentId = 'agent'): Promise<string[]> {
  const clock = new ManualClock(calls[0]!.turns[0]!.ts);
  const runtime = await createRuntime(config(), { clock, logger: createLogger('silent') });
  const scope: Scope = { tenantId: 'snapshots', agentId, userId: 'caller' };
  const svc = runtime.service;
  try {
    if (schema !== undefined) await svc.putSchema(scope.tenantId, scope.agentId, schema);
    const blocks: string[] = [];
    let n = 0;
    for (const call of calls) {
      clock.set(call.turns[0]!.ts);
      const start = await svc.startSession(scope);
      blocks.push(start.contextBlock);
      for (const t of call.turns) {
        clock.set(t.ts);
        await svc.appendTurn(scope, start.sessionId, { turnId: `t${++n}`, ...t });
      }
      await svc.endSession(scope, start.sessionId);
      await svc.flush(scope);
    }
    const last = calls[calls.length - 1]!.turns;
    clock.set(last[last.length - 1]!.ts + HOUR);
    blocks.push((await svc.startSession(scope)).contextBlock);
    return blocks;
  } finally {
    await runtime.close();
  }
}

function scenarioCalls(s: Scenario): Call[] {
  return s.calls.map((turns) => ({ turns: turns.map((t) => ({ role: t.role, text: t.text, ts: Date.parse(t.at), ...(t.asrConfidence !== undefined ? { asrConfidence: t.asrConfidence } : {}) })) }));
}

const schemaOf = (s: Scenario): unknown => (typeof s.schema === 'string' ? JSON.parse(readFileSync(new URL(`../../config/schemas/${s.schema}.json`, import.meta.url), 'utf8')) : s.schema);

describe('context block snapshots', () => {
  describe.each([...new Set(SCENARIOS.map((s) => s.domain))])('scenario conversations: %s', (domain) => {
    it('every block passes the checker; the next call’s blocks match the reviewed file', async () => {
      const parts: string[] = [];
      for (const s of SCENARIOS.filter((x) => x.domain === domain)) {
        const blocks = await play(schemaOf(s), scenarioCalls(s));
        blocks.forEach((b, i) => expect(blockDefects(b), `${s.id}, block ${i + 1}`).toEqual([]));
        parts.push(`==== ${s.id}: ${s.rule}\n${blocks[blocks.length - 1]!}\n`);
      }
      await expect(parts.join('\n')).toMatchFileSnapshot(`blocks/${domain}.txt`);
    });
  });

  it('the real-estate example through memgate replay', async () => {
    const out: string[] = [];
    await replay('config/examples/real-estate-calls.json', config(), { out: (l) => out.push(l), progress: () => {} });
    const head = out.findIndex((l) => l.startsWith('════ Next call: context block'));
    const block = out.slice(head + 1, out.indexOf('', head)).join('\n');
    expect(blockDefects(block)).toEqual([]);
    await expect(`${block}\n`).toMatchFileSnapshot('blocks/real-estate-calls.txt');
  });

  it('the two calls of npm run demo (ten days apart)', async () => {
    // scripts/demo.ts's turns, speaker labels as the demo sends them ("Meera (agent)"), to its agent
    // real-estate (config/schemas/real-estate.json by the agent's name).
    const now = Date.parse('2026-12-04T10:00:00Z');
    const lines = (at: number, rows: Array<[TurnInput['role'], string, string, Partial<TurnInput>?]>) => ({
      turns: rows.map(([role, speaker, text, extra], i) => ({ role, speaker, text, ts: at + i * 4000, ...extra })),
    });
    const blocks = await play(
      undefined,
      [
        lines(now - 10 * 24 * HOUR, [
          ['agent', 'Meera (agent)', 'Hello, this is Meera from Skyline Homes. How can I help?'],
          ['user', 'Asha Rao', 'Hi, I am Asha Rao. I am looking for a 3 BHK flat.', { asrConfidence: 0.96 }],
          ['agent', 'Meera (agent)', 'Lovely. Which area are you considering, and what is your', { interrupted: true }],
          ['user', 'Asha Rao', 'My budget is 50 lakhs, somewhere near Whitefield.', { asrConfidence: 0.91 }],
          ['agent', 'Meera (agent)', 'Noted: 50 lakhs near Whitefield. I will send you some options.'],
          ['user', 'Asha Rao', 'Thanks, talk soon.', { asrConfidence: 0.58 }],
        ]),
        lines(now, [
          ['agent', 'Meera (agent)', 'Hello Asha, Meera again. Any news on the loan?'],
          ['user', 'Asha Rao', 'Yes! The bank approved the loan, so my budget went up from 50 lakhs to 80 lakhs.', { asrConfidence: 0.95 }],
          ['agent', 'Meera (agent)', 'Wonderful, with 80 lakhs we can look at bigger flats too.'],
        ]),
      ],
      'real-estate',
    );
    blocks.forEach((b, i) => expect(blockDefects(b), `block ${i + 1}`).toEqual([]));
    await expect(`==== call 2 starts with\n${blocks[1]!}\n\n==== the next call starts with\n${blocks[2]!}\n`).toMatchFileSnapshot('blocks/demo.txt');
  });
});
