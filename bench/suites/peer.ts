import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeOpenAI } from '../../test/support/fake-openai.ts';
import type { PeerResult, PeerSpec } from '../peers/mem0/peer-runner.ts';
import { peerFakeReplies } from '../load/mem0-fake-replies.ts';
import { syntheticQuery } from '../load/synthetic-facts.ts';
import { syntheticTurn } from '../load/turn-text.ts';
import { EventTally } from '../load/event-tally.ts';
import { WsRpc } from '../load/ws-rpc.ts';
import { postJson, startMemgate } from '../lib/memgate.ts';
import { ownChild, tsxArgs } from '../lib/processes.ts';
import { say, startProgress } from '../lib/progress.ts';
import type { Figure } from '../lib/report-types.ts';
import { summarizeMs, type LatencySummary } from '../lib/stats.ts';
import { notRun, type Suite, type SuiteOutcome } from '../lib/suite.ts';
import { figure } from '../lib/targets.ts';
import { FAKE_LLM_DELAY_MS } from './extraction.ts';

const PEER_DIR = 'bench/peers/mem0';

/** Run a command to completion; resolves with its exit code and the tail of its output. */
function run(command: string, args: string[], opts: { cwd: string; env?: Record<string, string>; timeoutMs: number }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = ownChild(spawn(command, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-8192)));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Install bench/peers/mem0 on first use (its own package.json; never the root package). */
async function ensureMem0(repoRoot: string): Promise<string | null> {
  if (existsSync(join(repoRoot, PEER_DIR, 'node_modules', 'mem0ai', 'package.json'))) return null;
  say('  installing mem0ai@3.3.1 into bench/peers/mem0 (first use)');
  const r = await run('npm', ['install', '--prefix', PEER_DIR, '--no-audit', '--no-fund', '--legacy-peer-deps'], { cwd: repoRoot, timeoutMs: 300_000 });
  return r.code === 0 ? null : `npm install of bench/peers/mem0 failed (exit ${r.code}): ${r.stderr.slice(-400)}`;
}

/**
 * memgate beside mem0's open-source Memory, in one run, against the same fake LLM
 * (300 ms) and the same turns: how long until a turn is accepted (memgate's WS ack
 * vs `memory.add` resolving, plus mem0's no-LLM `infer: false` path), and search
 * latency. Both use the fake's embeddings endpoint, so neither gets a faster embedder.
 */
export const peerSuite: Suite = {
  name: 'peer',
  title: `Peer comparison: mem0 OSS Memory (mem0ai 3.3.1), same fake LLM (${FAKE_LLM_DELAY_MS} ms) and turns`,
  quick: false,
  async run(ctx): Promise<SuiteOutcome> {
    const installError = await ensureMem0(ctx.repoRoot);
    if (installError) return notRun(installError);
    const nTurns = ctx.profile === 'full' ? 100 : 30;
    const nQueries = ctx.profile === 'full' ? 100 : 30;
    const turns = Array.from({ length: nTurns }, (_, i) => syntheticTurn(3, i));
    const queries = Array.from({ length: nQueries }, (_, i) => syntheticTurnQuery(i));
    const fake = await startFakeOpenAI({ delayMs: FAKE_LLM_DELAY_MS, dimensions: 384 });
    fake.onChat(peerFakeReplies);
    const details: Record<string, unknown> = {
      turns: nTurns,
      queries: nQueries,
      memgate: 'extractor openai + embedder openai, both on the fake server',
      mem0: 'Memory: openai LLM + openai embedder on the fake server, memory vector store (SQLite), SQLite history',
    };
    const figures: Figure[] = [];
    const dir = join(ctx.tmpDir, 'peer');
    mkdirSync(join(dir, 'mem0'), { recursive: true });
    const memgate = await startMemgate(join(dir, 'memgate'), {
      config: {
        adapters: { extractor: 'openai', embedder: 'openai' },
        llm: { baseURL: fake.url, apiKey: 'bench', model: 'fake-300ms' },
        embeddings: { baseURL: fake.url, apiKey: 'bench', model: 'fake-embedding', dimensions: 384 },
      },
    });
    let mg: { ack: LatencySummary; search: LatencySummary; flushMs: number; acus: number };
    try {
      const agentId = `bench-peer-${ctx.runId}`;
      const tally = await EventTally.open(memgate.wsUrl, agentId);
      const rpc = await WsRpc.connect(memgate.wsUrl);
      const ackMs: number[] = [];
      const searchMs: number[] = [];
      let p = startProgress('memgate appends', () => `${ackMs.length}/${nTurns}`);
      await rpc.request({ op: 'start', agentId, userId: 'peer-user' });
      for (const t of turns) {
        const a = performance.now();
        await rpc.request({ op: 'append', role: t.role, text: t.text, speaker: t.speaker });
        ackMs.push(performance.now() - a);
      }
      p.stop();
      // Flush before `end`, so the measured flush is the extraction of the whole call.
      const f0 = performance.now();
      await postJson(`${memgate.url}/v1/agents/${agentId}/users/peer-user/flush`, {});
      const flushMs = performance.now() - f0;
      await rpc.request({ op: 'end' });
      await rpc.close();
      const totals = await tally.settle();
      await tally.close();
      const rpc2 = await WsRpc.connect(memgate.wsUrl);
      await rpc2.request({ op: 'start', agentId, userId: 'peer-user' });
      p = startProgress('memgate searches', () => `${searchMs.length}/${nQueries}`);
      for (const q of queries) {
        const a = performance.now();
        await rpc2.request({ op: 'search', query: q, k: 5 });
        searchMs.push(performance.now() - a);
      }
      p.stop();
      await rpc2.close();
      mg = { ack: summarizeMs(ackMs, 0, sum(ackMs) / 1000), search: summarizeMs(searchMs, 0, sum(searchMs) / 1000), flushMs, acus: totals.acusIndexed };
    } finally {
      await memgate.stop();
    }

    say(`  mem0: ${nTurns} × memory.add (LLM inference), ${nTurns} × add(infer: false), ${nQueries} × search`);
    const spec: PeerSpec = {
      fakeUrl: fake.url,
      dataDir: join(dir, 'mem0'),
      userId: 'peer-user',
      turns: turns.map((t) => ({ role: t.role === 'agent' ? 'assistant' : 'user', content: t.text })),
      queries,
      dimensions: 384,
    };
    const out = await run(process.execPath, tsxArgs('peer-runner.ts'), {
      cwd: join(ctx.repoRoot, PEER_DIR),
      env: { MEM0_PEER_SPEC: JSON.stringify(spec), MEM0_TELEMETRY: 'false', HOME: join(dir, 'mem0') },
      timeoutMs: 600_000,
    });
    await fake.close();
    const line = out.stdout.trim().split('\n').at(-1) ?? '';
    if (out.code !== 0 || !line.startsWith('{'))
      return { status: 'failed', reason: `mem0 peer process failed (exit ${out.code}): ${out.stderr.slice(-600)}`, figures, details: { ...details, memgate: mg } };
    const m0 = JSON.parse(line) as PeerResult;
    const m0add = summarizeMs(m0.addMs, m0.addErrors, sum(m0.addMs) / 1000);
    const m0raw = summarizeMs(m0.addRawMs, 0, sum(m0.addRawMs) / 1000);
    const m0search = summarizeMs(m0.searchMs, m0.searchErrors, sum(m0.searchMs) / 1000);
    details['memgateResult'] = mg;
    details['mem0Result'] = { add: m0add, addInferFalse: m0raw, search: m0search, memories: m0.memories, meanSearchResults: m0.meanSearchResults, firstError: m0.firstError };
    for (const [metric, key] of [
      ['p50', 'p50Ms'],
      ['p95', 'p95Ms'],
      ['p99', 'p99Ms'],
      ['max', 'maxMs'],
    ] as const) {
      figures.push(figure({ bench: 'turn accepted: memgate WS ack vs mem0 memory.add', metric, value: mg.ack[key], unit: 'ms', baseline: { label: 'mem0 add (LLM inference)', value: m0add[key] } }));
    }
    for (const [metric, key] of [
      ['p50', 'p50Ms'],
      ['p95', 'p95Ms'],
    ] as const) {
      figures.push(figure({ bench: 'turn accepted: memgate WS ack vs mem0 add(infer: false)', metric, value: mg.ack[key], unit: 'ms', baseline: { label: 'mem0 add, no LLM', value: m0raw[key] } }));
    }
    for (const [metric, key] of [
      ['p50', 'p50Ms'],
      ['p95', 'p95Ms'],
      ['p99', 'p99Ms'],
    ] as const) {
      figures.push(figure({ bench: 'search: memgate WS search vs mem0 memory.search', metric, value: mg.search[key], unit: 'ms', baseline: { label: 'mem0 search', value: m0search[key] } }));
    }
    figures.push(
      figure({ bench: 'memory built from the turns', metric: 'memgate ACUs (one flush) vs mem0 memories', value: mg.acus, unit: '', baseline: { label: 'mem0 memories', value: m0.memories } }),
    );
    figures.push(
      figure({
        bench: 'memory built from the turns',
        metric: 'memgate background flush (off the call path)',
        value: Math.round(mg.flushMs),
        unit: 'ms',
        baseline: { label: `mem0: ${nTurns} adds inline`, value: Math.round(sum(m0.addMs)) },
      }),
    );
    return { status: 'ok', figures, details };
  },
};

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

/** Questions about the synthetic calls' content (budget, visit, pets, loan). */
function syntheticTurnQuery(i: number): string {
  const qs = [
    'What is the caller budget?',
    'When is the site visit?',
    'Does the caller have a pet?',
    'How much was the loan approved for?',
    'Where does the caller live?',
    'When should we call back?',
    'What floor does the family prefer?',
    'How many parking slots are needed?',
  ];
  return qs[i % qs.length] ?? syntheticQuery(i);
}
