import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentSessionEventTypes, initializeLogger, voice } from '@livekit/agents';
import * as openai from '@livekit/agents-plugin-openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemgateMemory, type IntegrationLogger } from '../../src/integrations/livekit/index.ts';
import { startTestServer, uniq, type TestServer } from '../gateway/support/real-server.ts';
import { http } from '../gateway/support/ws-tester.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai.ts';
import { closedPort } from '../support/net.ts';
import { ScriptedAudioInput, ScriptedSTT } from '../support/scripted-stt.ts';
import { waitFor } from '../support/wait.ts';

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
});

describe('memgate/livekit when memgate is down', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'memgate-livekit-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the agent keeps talking; turns queue and reach memgate when it is back, then again after a mid-call outage; end still sent', async () => {
    const port = await closedPort();
    const config = { server: { port }, sqlite: { path: join(dir, 'memgate.db') } };
    const userId = uniq('down');
    const log = captureLog();
    const t0 = performance.now();
    const memory = await MemgateMemory.start({ url: `http://127.0.0.1:${port}`, agentId: 'estate', userId, logger: log, startTimeoutMs: 500, minRetryMs: 50, maxRetryMs: 200 });
    expect(performance.now() - t0).toBeLessThan(500);
    expect(memory.context).toBeNull();
    expect(memory.instructions('You are Maya.')).toBe('You are Maya.');
    expect(log.lines).toEqual([expect.stringMatching(/^warn memgate: memory degraded/)]);

    const before = fake.chatRequests.length;
    const session = await newSession(memory, 'You are Maya.');
    fake.scriptChat([{ toolCalls: [{ name: 'memory_search', arguments: { query: 'budget' } }] }, 'I do not have that yet.', 'Noted.']);
    const t1 = performance.now();
    await session.run({ userInput: 'What was my budget?' }).wait();
    await session.run({ userInput: 'It is 90 lakhs.' }).wait();
    // Two turns with a tool call, not held up by the dead memgate (the search answers "unavailable" at once).
    expect(performance.now() - t1).toBeLessThan(2000);
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
      expect(log.lines.at(-1)).toMatch(/^info memgate: memory restored/);

      // memgate goes down mid-call: the next turns queue; it restarts on the same data and gets them, each once.
      await srv.close();
      fake.scriptChat(['Sure.']);
      const t2 = performance.now();
      await session.run({ userInput: 'And a 3 BHK please.' }).wait();
      expect(performance.now() - t2).toBeLessThan(1000);
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
