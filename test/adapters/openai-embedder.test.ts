import { afterAll } from 'vitest';
import { OpenAiEmbedder } from '../../src/adapters/openai/index.ts';
import { embedderContract } from '../contract/embedder.contract.ts';
import { startFakeOpenAI } from '../support/fake-openai.ts';

// The OpenAI-compatible embedder runs the Embedder contract like every other adapter: the real
// `openai` client against the local fake, whose vectors are bags of per-word directions (so not
// semantic: paraphrases sharing few words are not expected to score high).
const fake = await startFakeOpenAI();
afterAll(() => fake.close());
embedderContract(
  'OpenAI-compatible (real openai client, local fake)',
  () => new OpenAiEmbedder({ baseURL: fake.url, apiKey: 'test-key', model: 'fake-embedding', dimensions: 384, timeoutMs: 5_000 }),
  {
    dimensions: 384,
    semantic: false,
    tolerance: 1e-6,
  },
);
