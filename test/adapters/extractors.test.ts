import { afterAll } from 'vitest';
import { OfflineExtractor } from '../../src/adapters/offline/index.ts';
import { OpenAiExtractor } from '../../src/adapters/openai/index.ts';
import { extractorContract } from '../contract/extractor.contract.ts';
import { startFakeOpenAI, type FakeChatBody } from '../support/fake-openai.ts';

// Every Extractor adapter runs the port's contract: the offline rules, and the OpenAI-compatible
// adapter through the real `openai` client against the local fake over HTTP.
extractorContract('offline rules', () => new OfflineExtractor());

interface Line {
  turnId: string;
  role: string;
  speaker?: string;
  text: string;
}

/** The turn lines of a prompt (JSON lines with a turnId), as a model reads them. */
function turnLines(body: FakeChatBody): Line[] {
  const out: Line[] = [];
  for (const m of body.messages) {
    for (const raw of String(m.content).split('\n')) {
      try {
        const line = JSON.parse(raw) as Partial<Line>;
        if (typeof line.turnId === 'string' && typeof line.text === 'string') out.push(line as Line);
      } catch {
        // not a turn line
      }
    }
  }
  return out;
}

/**
 * A model that answers what it reads, plus the noise a real model produces: an unknown field,
 * evidence nobody said, a fact resting on the agent's word, an empty unit. The adapter must
 * keep the pipeline's promises anyway, which is what the contract checks.
 */
function sloppyModel(body: FakeChatBody): Record<string, unknown> {
  const lines = turnLines(body);
  const fact = (field: string, value: unknown, evidence: string[]) => ({ field, qualifier: null, value, source: 'explicit', validFrom: null, correction: false, ended: false, evidence });
  if (body.response_format?.json_schema?.name === 'extracted_facts') {
    const facts: unknown[] = [];
    for (const l of lines) {
      const name = /my name is ([A-Z]\w+ [A-Z]\w+)/.exec(l.text);
      if (name && l.role === 'user') facts.push(fact('full_name', name[1], [l.turnId]));
      const lakhs = /(\d+) lakhs/.exec(l.text);
      if (lakhs) facts.push(fact('budget', { amount: Number(lakhs[1]) * 100_000, currency: 'INR' }, [l.turnId]));
      if (/office number/.test(l.text)) facts.push(fact('phone', '080 4455 6677', [l.turnId]));
    }
    if (lines.length > 0) facts.push(fact('favourite_colour', 'blue', [lines[0]!.turnId]), fact('full_name', 'Nobody', ['t-nowhere']));
    return { facts };
  }
  const acus: unknown[] = lines.filter((l) => l.role === 'user').map((l) => ({ text: `${l.speaker ?? 'The caller'} said: ${l.text}`, turnRefs: [l.turnId], validAt: null }));
  if (lines.length > 0) acus.push({ text: '   ', turnRefs: [], validAt: null }, { text: 'A unit citing nothing said.', turnRefs: ['t-nowhere'], validAt: null });
  return { acus };
}

const fake = await startFakeOpenAI();
fake.onChat(sloppyModel);
afterAll(() => fake.close());
extractorContract(
  'OpenAI-compatible (real openai client, local fake model)',
  () => new OpenAiExtractor({ baseURL: fake.url, apiKey: 'test-key', model: 'fake-model', timeoutMs: 5_000, maxRetries: 1 }),
);
