import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai.ts';

/** The fake OpenAI server speaks streamed chat completions and tool calls, as the LiveKit OpenAI plugin uses them. */
let fake: FakeOpenAI;
let client: OpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  client = new OpenAI({ baseURL: fake.url, apiKey: 'test', maxRetries: 0 });
});
afterAll(() => fake.close());

describe('fake OpenAI: streaming and tool calls', () => {
  it('streams a text reply in pieces, then the finish reason and usage', async () => {
    fake.scriptChat(['Your budget is 80 lakhs.']);
    const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let finish: string | null = null;
    let usage = false;
    let chunks = 0;
    for await (const c of stream) {
      chunks++;
      text += c.choices[0]?.delta.content ?? '';
      finish = c.choices[0]?.finish_reason ?? finish;
      usage ||= c.usage != null;
    }
    expect({ text, finish, usage }).toEqual({ text: 'Your budget is 80 lakhs.', finish: 'stop', usage: true });
    expect(chunks).toBeGreaterThan(3);
    expect(fake.chatRequests.at(-1)?.stream).toBe(true);
  });

  it('answers with scripted tool calls, streamed and plain', async () => {
    fake.scriptChat([{ toolCalls: [{ name: 'memory_search', arguments: { query: 'budget' } }] }, { toolCalls: [{ name: 'memory_search', arguments: '{"query":"flat"}', id: 'call_1' }] }]);
    const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'budget?' }], stream: true });
    const calls: Array<{ name?: string; args?: string }> = [];
    let finish: string | null = null;
    for await (const c of stream) {
      for (const t of c.choices[0]?.delta.tool_calls ?? []) calls.push({ name: t.function?.name, args: t.function?.arguments });
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(calls).toEqual([{ name: 'memory_search', args: '{"query":"budget"}' }]);
    expect(finish).toBe('tool_calls');
    const plain = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'flat?' }] });
    expect(plain.choices[0]?.finish_reason).toBe('tool_calls');
    expect(plain.choices[0]?.message.tool_calls).toEqual([{ id: 'call_1', type: 'function', function: { name: 'memory_search', arguments: '{"query":"flat"}' } }]);
  });
});
