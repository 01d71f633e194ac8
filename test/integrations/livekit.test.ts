import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentSessionEventTypes, initializeLogger, JobContext, runWithJobContext, voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { formatResults, MemgateMemory, type IntegrationLogger } from '../../src/integrations/livekit/index.ts';
import { startGateway } from '../../src/gateway/server.ts';
import { startTestServer, uniq, type TestServer } from '../gateway/support/real-server.ts';
import { http } from '../gateway/support/ws-tester.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai.ts';
import { TcpProxy } from '../client/support/tcp-proxy.ts';
import { closedPort } from '../support/net.ts';
import { ScriptedAudioInput, ScriptedSTT } from '../support/scripted-stt.ts';
import { waitFor } from '../support/wait.ts';
import { removeDir } from '../support/tmp.ts';

/**
 * memgate/livekit with the real LiveKit Agents 1.9.0: a `voice.AgentSession` (no room: the
 * lowest real layer that runs without a LiveKit server, driven by text input through
 * `session.run({ userInput })` / `generateReply`) with the real OpenAI plugin LLM pointed at the
 * local fake OpenAI server, against a running memgate gateway (embedded runtime, real WebSocket).
 * Audio input goes through the real AudioRecognition with a scripted recogniser (test/support/
 * scripted-stt.ts): no STT, VAD or TTS model can run here, nor a room. The barge-in is therefore
 * `session.interrupt()`, the call the VAD-driven interruption makes when the user speaks over the agent.
 */
const schema = JSON.parse(readFileSync(new URL('../../config/schemas/real-estate.json', import.meta.url), 'utf8')) as unknown;
let fake: FakeOpenAI;
const sessions: voice.AgentSession[] = [];

function captureLog(): IntegrationLogger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => lines.push(`info ${m}`), warn: (m) => lines.push(`warn ${m}`) };
}

async function newSession(memory: MemgateMemory, base: string): Promise<voice.AgentSession> {
  const session = new voice.AgentSession({ llm: new openai.LLM({ model: 'gpt-4o-mini', baseURL: fake.url, apiKey: 'test' }) });
  sessions.push(session);
  memory.attach(session);
  await session.start({ agent: new voice.Agent({ instructions: memory.instructions(base), tools: memory.tools() }) });
  return session;
}

const turnsOf = async (srv: TestServer, agentId: string, userId: string) => (await http(srv.base, 'GET', `/v1/agents/${agentId}/users/${userId}/turns`)).body.turns as Array<Record<string, unknown>>;

beforeAll(async () => {
  initializeLogger({ pretty: false, level: 'silent' });
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  for (const s of sessions.splice(0)) await s.close();
});
afterAll(() => fake.close());

describe('memgate/livekit on a real voice.AgentSession', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer();
    expect((await http(srv.base, 'PUT', '/v1/agents/estate/schema', { body: schema })).status).toBe(200);
  });
  afterAll(() => srv.close());

  it('context in the first LLM request, memory_search answered from memory, every committed item stored with its id, end on close', async () => {
    const userId = uniq('asha');
    // An earlier call: the budget, extracted into a fact.
    const prev = await http(srv.base, 'POST', '/v1/sessions', { body: { agentId: 'estate', userId } });
    await http(srv.base, 'POST', `/v1/sessions/${prev.body.sessionId}/turns`, { body: { role: 'user', text: 'My budget is 80 lakhs now, the bank approved it.' } });
    await http(srv.base, 'POST', `/v1/agents/estate/users/${userId}/flush`);

    const log = captureLog();
    const memory = await MemgateMemory.start({ url: srv.base, agentId: 'estate', userId, speakers: { user: 'Asha Rao', agent: 'Maya' }, logger: log });
    expect(memory.context?.contextBlock).toContain('80 lakh');
    const before = fake.chatRequests.length;
    const session = await newSession(memory, 'You are Maya, a property advisor.');

    // Turn 1: the model calls memory_search, then answers from the tool's result.
    fake.scriptChat([{ toolCalls: [{ name: 'memory_search', arguments: { query: 'budget' } }] }, 'Your budget is 80 lakhs.']);
    await session.run({ userInput: 'What was my budget again?' }).wait();
    const [first, followUp] = fake.chatRequests.slice(before);
    expect(first!.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('You are Maya, a property advisor.') });
    expect(first!.messages[0]!.content).toContain(memory.context!.contextBlock.trim());
    expect(first!.messages[0]!.content).toContain('80 lakh');
    expect(first!.tools?.map((t) => t.function.name)).toEqual(['memory_search']);
    const toolMsg = followUp!.messages.find((m) => m.role === 'tool');
    expect(toolMsg?.content).toMatch(/From memory:[\s\S]*80 lakh[\s\S]*confidence/);

    await session.close();
    await memory.end();
    expect(memory.call.queued).toBe(0);

    const items = session.history.items.filter((i) => i.type === 'message');
    const turns = (await turnsOf(srv, 'estate', userId)).filter((t) => t['sessionId'] === memory.sessionId);
    expect(turns.map((t) => t['turnId'])).toEqual(items.map((i) => i.id));
    expect(turns.map((t) => [t['role'], t['text'], t['speaker']])).toEqual([
      ['user', 'What was my budget again?', 'Asha Rao'],
      ['agent', 'Your budget is 80 lakhs.', 'Maya'],
    ]);
    // Text input has no recogniser, so no asrConfidence; nothing was cut off (spoken turns and barge-in: next test).
    expect(turns[0]!['asrConfidence']).toBeUndefined();
    expect(turns[1]!['interrupted']).toBeUndefined();
    const record = await srv.runtime.service.session('default', memory.sessionId);
    expect(record?.endedAt).toEqual(expect.any(Number));
    expect(log.lines.filter((l) => l.startsWith('warn'))).toEqual([]);
  });

  it("spoken turns: the STT's confidence becomes asrConfidence, its diarized speaker the speaker; a barge-in stores what was heard, interrupted", async () => {
    const userId = uniq('ravi');
    const memory = await MemgateMemory.start({ url: srv.base, agentId: 'estate', userId, speakers: { agent: 'Maya' }, logger: captureLog() });
    // Audio in through the real AudioRecognition, turn commit and interruption; only the recogniser is scripted (no STT model runs here).
    const session = new voice.AgentSession({
      stt: new ScriptedSTT([
        { text: 'My budget is maybe sixty lakhs.', confidence: 0.41, speakerId: 'S2' },
        { text: 'Wait, what about Wakad?', confidence: 0.93, speakerId: 'S2' },
      ]),
      llm: new openai.LLM({ model: 'gpt-4o-mini', baseURL: fake.url, apiKey: 'test' }),
      turnHandling: { turnDetection: 'stt' },
    });
    sessions.push(session);
    memory.attach(session);
    const audio = new ScriptedAudioInput();
    session.input.audio = audio;
    await session.start({ agent: new voice.Agent({ instructions: memory.instructions('You are Maya.'), tools: memory.tools() }) });
    const longReply = 'Noted, about sixty lakhs. The Baner flats start at 55 lakhs and the ones near the park have three bedrooms with a balcony facing east';
    fake.scriptChat([{ content: longReply, chunkDelayMs: 60 }, 'Wakad has two-bedroom flats from 58 lakhs.']);
    const agentTurns: string[] = [];
    const done = new Promise<void>((r) =>
      session.on(AgentSessionEventTypes.ConversationItemAdded, (ev) => {
        if (ev.item.type === 'message' && ev.item.role === 'assistant' && agentTurns.push(ev.item.id) === 2) r();
      }),
    );
    const speaking = new Promise<void>((r) => session.on(AgentSessionEventTypes.AgentStateChanged, (ev) => ev.newState === 'speaking' && r()));
    audio.speak();
    await speaking;
    await new Promise((r) => setTimeout(r, 300));
    audio.speak(); // the user talks over the agent
    await done;
    await session.close();
    await memory.end();
    const items = session.history.items.filter((i) => i.type === 'message');
    // The cut agent turn is committed after the barge-in that cut it: memgate's seq follows commit order, and `ts` (the item's
    // createdAt) puts it back where it was said.
    const turns = (await turnsOf(srv, 'estate', userId)).sort((a, b) => Number(a['ts']) - Number(b['ts']));
    expect(turns.map((t) => t['turnId'])).toEqual(items.map((i) => i.id));
    expect(turns[0]).toMatchObject({ role: 'user', text: 'My budget is maybe sixty lakhs.', asrConfidence: 0.41, speaker: 'S2' });
    expect(turns[1]).toMatchObject({ role: 'agent', speaker: 'Maya', interrupted: true });
    expect(longReply.startsWith(String(turns[1]!['text']))).toBe(true);
    expect(String(turns[1]!['text']).length).toBeLessThan(longReply.length);
    expect(turns[2]).toMatchObject({ role: 'user', text: 'Wait, what about Wakad?', asrConfidence: 0.93, speaker: 'S2' });
    expect(turns[3]).toMatchObject({ role: 'agent', text: 'Wakad has two-bedroom flats from 58 lakhs.' });
    expect(turns[3]!['interrupted']).toBeUndefined();
  });

  it('a memgate that stops answering mid-call (replies lost): the tool answers "unavailable" within its deadline, the agent goes on, retried turns are stored once', async () => {
    const proxy = await TcpProxy.start(srv.gateway.port);
    try {
      const userId = uniq('slow');
      const log = captureLog();
      const memory = await MemgateMemory.start({ url: `http://127.0.0.1:${proxy.port}`, agentId: 'estate', userId, logger: log, requestTimeoutMs: 400, minRetryMs: 50, maxRetryMs: 200 });
      expect(memory.context).not.toBeNull();
      const session = await newSession(memory, 'You are Maya.');
      proxy.muteReplies = true; // requests reach memgate, its answers never come back
      const before = fake.chatRequests.length;
      fake.scriptChat([{ toolCalls: [{ name: 'memory_search', arguments: { query: 'budget' } }] }, 'I cannot check right now.']);
      await session.run({ userInput: 'What was my budget?' }).wait();
      const toolMsg = fake.chatRequests
        .slice(before)
        .flatMap((r) => r.messages)
        .find((m) => m.role === 'tool');
      expect(toolMsg?.content).toContain('Memory is unavailable');
      // The agent answered while both turns still wait for an ack.
      expect(memory.call.queued).toBe(2);
      await waitFor(() => memory.call.degraded, 5000, 'degraded');
      proxy.muteReplies = false;
      await waitFor(() => memory.call.queued === 0, 10_000, 'queue drained');
      await session.close();
      await memory.end();
      const items = session.history.items.filter((i) => i.type === 'message').map((i) => i.id);
      expect((await turnsOf(srv, 'estate', userId)).map((t) => t['turnId'])).toEqual(items);
      expect(log.lines.filter((l) => /degraded/.test(l))).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it('a gateway that drains mid-call (1001): the plugin moves to the next URL, reopens the call, every item stored once', async () => {
    const a = await startTestServer();
    const b = await startGateway(a.runtime);
    try {
      expect((await http(a.base, 'PUT', '/v1/agents/estate/schema', { body: schema })).status).toBe(200);
      const userId = uniq('drain');
      const memory = await MemgateMemory.start({ url: [a.base, `http://127.0.0.1:${b.port}`], agentId: 'estate', userId, logger: captureLog(), minRetryMs: 50, maxRetryMs: 200 });
      const session = await newSession(memory, 'You are Maya.');
      fake.scriptChat(['Noted, 90 lakhs.']);
      await session.run({ userInput: 'My budget is 90 lakhs.' }).wait();
      await waitFor(() => memory.call.queued === 0, 5000, 'first turns delivered');
      await a.gateway.close({ drainTimeoutMs: 1000 });
      fake.scriptChat(['A 3 BHK, noted.']);
      await session.run({ userInput: 'And a 3 BHK please.' }).wait();
      await waitFor(() => memory.call.queued === 0, 10_000, 'turns delivered through the second gateway');
      await session.close();
      await memory.end();
      const items = session.history.items.filter((i) => i.type === 'message').map((i) => i.id);
      expect((await turnsOf({ ...a, base: `http://127.0.0.1:${b.port}` }, 'estate', userId)).map((t) => t['turnId'])).toEqual(items);
      expect((await a.runtime.service.session('default', memory.sessionId))?.endedAt).not.toBeNull();
    } finally {
      await b.close({ drainTimeoutMs: 1000 });
      await a.close();
    }
  });

  it('a session id that belongs to another user is refused once: memory is off for the call, nothing retried or stored', async () => {
    const sessionId = uniq('taken');
    await srv.runtime.service.startSession({ tenantId: 'default', agentId: 'estate', userId: uniq('owner') }, sessionId);
    const log = captureLog();
    const userId = uniq('intruder');
    const memory = await MemgateMemory.start({ url: srv.base, agentId: 'estate', userId, sessionId, logger: log, minRetryMs: 20, maxRetryMs: 50 });
    expect(memory.context).toBeNull();
    memory.call.append({ role: 'user', text: 'My budget is 70 lakhs.', turnId: 'i-1' });
    await new Promise((r) => setTimeout(r, 200));
    await memory.end();
    expect(log.lines.filter((l) => /call refused/.test(l))).toHaveLength(1);
    expect(await turnsOf(srv, 'estate', userId)).toEqual([]);
  });

  it('inside a LiveKit job, the call is ended before the job shuts down (a shutdown callback)', async () => {
    // A JobContext as the worker builds it for a job; its room is a stand-in object because no LiveKit server runs here.
    const room = { name: 'room', on: () => room, off: () => room, isConnected: false, remoteParticipants: new Map() };
    const job = new JobContext(
      {} as never,
      { acceptArguments: { name: 'agent', identity: 'agent', metadata: '' }, job: { id: 'job-1', room: { name: 'room' }, attributes: {} }, url: 'wss://x', token: 't', workerId: 'w' } as never,
      room as never,
      () => undefined,
      () => undefined,
      {} as never,
    );
    const memory = await MemgateMemory.start({ url: srv.base, agentId: 'estate', userId: uniq('job'), logger: captureLog() });
    const session = new voice.AgentSession({ llm: new openai.LLM({ model: 'gpt-4o-mini', baseURL: fake.url, apiKey: 'test' }) });
    runWithJobContext(job, () => memory.attach(session));
    const callbacks = (job as unknown as { shutdownCallbacks: Array<() => Promise<void>> }).shutdownCallbacks;
    expect(callbacks).toHaveLength(1);
    await callbacks[0]!();
    expect((await srv.runtime.service.session('default', memory.sessionId))?.endedAt).toEqual(expect.any(Number));
  });
});

describe('memgate/livekit when memgate is down', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'memgate-livekit-'));
  });
  afterAll(() => removeDir(dir));

  it('the agent keeps talking; turns queue and reach memgate when it is back, its context joins the instructions late; again after a mid-call outage; end still sent', async () => {
    const port = await closedPort();
    const config = { server: { port }, sqlite: { path: join(dir, 'memgate.db') } };
    const userId = uniq('down');
    const log = captureLog();
    const memory = await MemgateMemory.start({ url: `http://127.0.0.1:${port}`, agentId: 'estate', userId, logger: log, startTimeoutMs: 500, minRetryMs: 50, maxRetryMs: 200 });
    expect(memory.context).toBeNull();
    expect(memory.instructions('You are Maya.')).toBe('You are Maya.');
    expect(log.lines).toEqual([expect.stringMatching(/^warn memgate: memory degraded/)]);

    const before = fake.chatRequests.length;
    const session = await newSession(memory, 'You are Maya.');
    fake.scriptChat([{ toolCalls: [{ name: 'memory_search', arguments: { query: 'budget' } }] }, 'I do not have that yet.', 'Noted.']);
    await session.run({ userInput: 'What was my budget?' }).wait();
    await session.run({ userInput: 'It is 90 lakhs.' }).wait();
    // Two turns with a tool call answered while memgate is down (the search says "unavailable"), all four turns still queued.
    const toolMsg = fake.chatRequests
      .slice(before)
      .flatMap((r) => r.messages)
      .find((m) => m.role === 'tool');
    expect(toolMsg?.content).toContain('Memory is unavailable');
    expect(memory.call.queued).toBe(4);

    // memgate comes up: the queued turns arrive, in order, under the call's session.
    let srv = await startTestServer({ config });
    try {
      await waitFor(() => memory.call.queued === 0 && !memory.call.degraded, 10_000, 'queue drained');
      const items = session.history.items.filter((i) => i.type === 'message').map((i) => i.id);
      expect((await turnsOf(srv, 'estate', userId)).map((t) => t['turnId'])).toEqual(items);
      expect(log.lines).toContainEqual(expect.stringMatching(/^info memgate: memory restored/));
      // The context memgate could not give at start goes into the instructions from the next reply on.
      await waitFor(() => log.lines.some((l) => /context arrived late/.test(l)), 5000, 'late context');

      // memgate goes down mid-call: the next turns queue; it restarts on the same data and gets them, each once.
      await srv.close();
      fake.scriptChat(['Sure.']);
      const n = fake.chatRequests.length;
      await session.run({ userInput: 'And a 3 BHK please.' }).wait();
      expect(fake.chatRequests[n]!.messages[0]!.content).toMatch(/^You are Maya\.\n\n# Memory of this user/);
      // Answered while its two turns wait for memgate.
      expect(memory.call.queued).toBe(2);
      await waitFor(() => memory.call.degraded, 5000, 'degraded');
      srv = await startTestServer({ config });
      await waitFor(() => memory.call.queued === 0 && !memory.call.degraded, 10_000, 'queue drained again');
      await session.close();
      await memory.end();
      const all = session.history.items.filter((i) => i.type === 'message').map((i) => i.id);
      const turns = await turnsOf(srv, 'estate', userId);
      expect(turns.map((t) => t['turnId'])).toEqual(all);
      expect(all).toHaveLength(6);
      expect((await srv.runtime.service.session('default', memory.sessionId))?.endedAt).toEqual(expect.any(Number));
      expect(log.lines.filter((l) => /degraded/.test(l)).length).toBe(2);
    } finally {
      await srv.close();
    }
  }, 40_000);

  it('a memgate that accepts connections but never answers: start gives up within startTimeoutMs, the tool answers within its deadline', async () => {
    const sockets = new Set<Socket>();
    const hang = createServer((s) => void sockets.add(s));
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', r));
    try {
      const log = captureLog();
      const url = `http://127.0.0.1:${(hang.address() as AddressInfo).port}`;
      // The server never answers: that start returns at all is the bound.
      const memory = await MemgateMemory.start({ url, agentId: 'estate', userId: 'hung', logger: log, startTimeoutMs: 300, endTimeoutMs: 100 });
      expect(memory.context).toBeNull();
      expect(log.lines).toEqual([expect.stringMatching(/^warn memgate: memory degraded.*/)]);
      const answer = await memory.tools().memory_search.execute({ query: 'budget' }, {} as never);
      expect(answer).toMatch(/Memory is unavailable/);
      await memory.end();
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => hang.close(r));
    }
  });

  it('the queue is bounded: past maxQueuedTurns the oldest turns are dropped, with a log line', async () => {
    const port = await closedPort();
    const log = captureLog();
    const memory = await MemgateMemory.start({ url: `http://127.0.0.1:${port}`, agentId: 'estate', userId: 'bounded', logger: log, startTimeoutMs: 200, maxQueuedTurns: 3, endTimeoutMs: 100 });
    for (let i = 0; i < 5; i++) memory.call.append({ role: 'user', text: `turn ${i}`, turnId: `t${i}` });
    expect(memory.call.queued).toBe(3);
    expect(log.lines.some((l) => /queue full/.test(l))).toBe(true);
    await memory.end();
    expect(log.lines.at(-1)).toMatch(/undelivered turns are lost/);
  });
});

describe('formatResults', () => {
  it('is a few compact lines: confidence, outdated values with the current one, partial replies said so', () => {
    const r = (text: string, extra: Record<string, unknown> = {}) => ({ text, score: 1, confidence: 'high' as const, source: 'fact' as const, turnRefs: [], validAt: '2026-12-04', ...extra });
    expect(formatResults({ results: [], tookMs: 1 })).toBe('Nothing in memory about that.');
    expect(formatResults({ results: [r('budget is ₹80 lakh'), r('budget was ₹50 lakh', { confidence: 'low', outdated: { key: 'budget', now: '₹80 lakh' } })], tookMs: 3 })).toBe(
      'From memory:\n- budget is ₹80 lakh (high confidence)\n- budget was ₹50 lakh (low confidence; outdated, now: ₹80 lakh)',
    );
    const long = formatResults({ results: [r('x'.repeat(1000))], tookMs: 3, partial: true });
    expect(long.startsWith('Partial memory results')).toBe(true);
    expect(long.length).toBeLessThan(400);
  });
});
