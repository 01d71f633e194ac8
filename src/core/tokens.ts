/**
 * Cheap token estimate (~4 characters per token for English, as OpenAI's rule of thumb).
 * The threshold it feeds is a cost knob, not a billing figure, so no tokenizer on the hot path.
 */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}
