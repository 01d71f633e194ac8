import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { say } from '../lib/progress.ts';
import { startMemgate } from '../lib/memgate.ts';
import { summarizeMs } from '../lib/stats.ts';
import type { Suite, SuiteOutcome } from '../lib/suite.ts';
import { latencyFigures } from './latency-figures.ts';
import { livekitOverhead } from './livekit-overhead.ts';

const N = 400;

/** Sequential POSTs of `body(i)` to `url`, timed one by one (a webhook platform waits for each answer). */
async function timePosts(url: string, body: (i: number) => unknown): Promise<{ ms: number[]; errors: number; durationS: number }> {
  const ms: number[] = [];
  let errors = 0;
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const s = performance.now();
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body(i)) });
    await res.arrayBuffer();
    if (res.ok) ms.push(performance.now() - s);
    else errors++;
  }
  return { ms, errors, durationS: (performance.now() - t0) / 1000 };
}

/**
 * What the Vapi-style server URL costs a hosted voice platform per message: a final
 * transcript stored as a turn, and the call-start context, against the plain HTTP
 * turn append and session start measured in the same run (fetch, one at a time).
 * Then what memgate/livekit adds to a LiveKit agent's turn (./livekit-overhead.ts).
 */
export const integrationsSuite: Suite = {
  name: 'integrations',
  title: 'Vapi-style server URL against the plain HTTP routes; memgate/livekit overhead on a LiveKit AgentSession (embedded default)',
  quick: true,
  async run(ctx): Promise<SuiteOutcome> {
    const server = await startMemgate(join(ctx.tmpDir, 'integrations'));
    try {
      const fixture = (name: string) => JSON.parse(readFileSync(join(ctx.repoRoot, 'test/fixtures/vapi', `${name}.json`), 'utf8')) as { message: Record<string, any> };
      const vapi = `${server.url}/v1/integrations/vapi?agentId=bench`;
      const transcript = fixture('transcript-user-final');
      const start = fixture('assistant-request');
      say(`integrations: ${N} Vapi transcripts, ${N} HTTP appends, ${N} of each start`);
      const session = (await (
        await fetch(`${server.url}/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agentId: 'bench', userId: 'plain' }) })
      ).json()) as { sessionId: string };
      // Warm both paths first (JIT, caches), so order does not favour the second.
      await timePosts(`${server.url}/v1/sessions/${session.sessionId}/turns`, (i) => ({ role: 'user', text: 'warm-up', turnId: `w${i}` }));
      await timePosts(vapi, (i) => ({ message: { ...transcript.message, timestamp: 1_700_000_000_000 + i } }));
      const plainAppend = await timePosts(`${server.url}/v1/sessions/${session.sessionId}/turns`, (i) => ({ role: 'user', text: transcript.message['transcript'], turnId: `p${i}` }));
      const vapiAppend = await timePosts(vapi, (i) => ({ message: { ...transcript.message, timestamp: 1_767_607_205_000 + i } }));
      const plainStart = await timePosts(`${server.url}/v1/sessions`, (i) => ({ agentId: 'bench', userId: `s${i % 20}` }));
      const vapiStart = await timePosts(vapi, (i) => ({ message: { ...start.message, call: { ...start.message['call'], id: `c${i}`, customer: { number: `+9198${i % 20}` } } } }));
      const sum = (r: { ms: number[]; errors: number; durationS: number }) => summarizeMs(r.ms, r.errors, r.durationS);
      // A user with memory for the LiveKit runs: the context block and memory_search have something to return.
      const lkUser = 'livekit-asha';
      const lkSession = (await (
        await fetch(`${server.url}/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ agentId: 'bench', userId: lkUser }) })
      ).json()) as { sessionId: string };
      await timePosts(`${server.url}/v1/sessions/${lkSession.sessionId}/turns`, (i) => ({ role: 'user', text: i % 2 ? 'My budget is 80 lakhs.' : 'I want a 3 BHK near Baner.', turnId: `lk${i}` }));
      await fetch(`${server.url}/v1/agents/bench/users/${lkUser}/flush`, { method: 'POST' });
      const lkRuns = ctx.profile === 'full' ? 100 : 30;
      say(`integrations: LiveKit AgentSession, ${lkRuns} sessions with and without memgate`);
      const lk = await livekitOverhead(server.url, lkRuns, lkUser);
      const figures = [
        ...latencyFigures(`Vapi final transcript → turn (${N}, sequential)`, sum(vapiAppend), { label: 'POST /v1/sessions/{id}/turns', summary: sum(plainAppend) }),
        ...latencyFigures(`Vapi assistant-request → context variable (${N}, sequential)`, sum(vapiStart), { label: 'POST /v1/sessions', summary: sum(plainStart) }),
        ...lk.figures,
      ];
      return { status: 'ok', figures, details: { n: N, ...lk.details } };
    } finally {
      await server.stop();
    }
  },
};
