/**
 * Fake-LLM answers for mem0's additive extraction request (`response_format:
 * json_object`, reply `{"memory": [{id, text, attributed_to}]}`): one memory per
 * new message, so mem0 does its full add path (embed, dedup, insert, history,
 * entity linking) just as memgate's lane does with its own fake answers.
 */
import type { FakeChatBody, FakeChatReply } from '../../test/support/fake-openai.ts';
import { memgateFakeReplies } from './fake-llm-replies.ts';

function mem0Reply(body: FakeChatBody): FakeChatReply {
  const prompt = body.messages
    .filter((m) => m.role === 'user')
    .map((m) => m.content)
    .join('\n');
  const section = /## New Messages\n([\s\S]*?)\n\n## /.exec(prompt)?.[1] ?? '';
  const memory = section
    .split('\n')
    .map((line) => /^(user|assistant): (.+)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null && m[2]!.split(' ').length > 5)
    .map((m, i) => ({ id: String(i), text: `${m[1] === 'assistant' ? 'The agent' : 'The user'} said: ${m[2]}`, attributed_to: m[1] === 'assistant' ? 'assistant' : 'user' }));
  return { memory };
}

/** One handler for both peers: mem0's json_object requests and memgate's json_schema ones. */
export function peerFakeReplies(body: FakeChatBody): FakeChatReply {
  return body.response_format?.type === 'json_object' ? mem0Reply(body) : memgateFakeReplies(body);
}
