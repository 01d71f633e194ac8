import type { Runner } from '../runner.ts';
import { Int8Encoder, MAX_TOKENS } from './encoder.ts';

/**
 * The int8 encoder as a Runner: what the embed thread imports (by URL) when the runtime is
 * 'int8', and what the in-process loader uses. Synchronous once loaded (~0.15 s: reading
 * and quantizing the shards).
 */
export function loadRunner(): Promise<Runner> {
  const encoder = new Int8Encoder();
  return Promise.resolve({ maxTokens: MAX_TOKENS, direct: true, embed: (texts: string[]) => encoder.embed(texts) });
}
