import { iso } from '../../core/clock.ts';
import type { CompressionInput } from '../../ports/extractor.ts';
import { renderTurnLines } from './turn-lines.ts';

// The atomicity constraint of docs/design.md §3 and the seed paper §6.1: a hard contract, not style.
const ATOMICITY_RULES = `Each ACU must be fully interpretable on its own, with no surrounding conversation. Hard rules:
1. No pronouns or implied references: never "he", "she", "they", "it", "this", "that", "there", "I", "my", "you", "your". Repeat the name instead.
2. Explicit subject: name the person with their role in parentheses, e.g. "Rajiv Kumar (user) ...", "Priya (agent) ...". When a name is unknown write "The user" or "The agent".
3. No relative time: turn "yesterday", "tomorrow", "next Friday", "last month", "in two weeks" into absolute dates (YYYY-MM-DD) computed from the ts of the turn that says them. When the time a fact holds matters, add "as of <YYYY-MM-DD of that turn>".
4. One fact per ACU, keeping every concrete detail: numbers, amounts with currency, names, places, dates.
5. Skip greetings, filler and small talk. Return {"acus": []} when the segment holds nothing worth remembering.`;

const EXAMPLE = `Invalid: "He wants a 3-bedroom flat near his office" (pronouns). "User mentioned budget yesterday" (relative time). "Budget is 80 lakhs" (whose?).
Valid: "Rajiv Kumar (user) is looking for a 3-bedroom flat in Whitefield, Bangalore, with a budget of ₹80 lakhs as of 2026-01-15."`;

const OUTPUT_RULES = `Reply with JSON matching the response schema: {"acus": [{text, turnRefs, validAt}]}.
turnRefs: the turnId values of the turns the ACU comes from, copied exactly.
validAt: the world time the fact refers to (ISO 8601), or null to use the time of its turns.`;

/** System and user messages for stage 3: the atomicity rules and one segment of turns. */
export function buildCompressionPrompt(input: CompressionInput): { system: string; user: string } {
  const system = [
    'You rewrite a short segment of a conversation between a user and a voice agent into Atomic Context Units (ACUs): self-contained facts for a searchable memory.',
    ATOMICITY_RULES,
    EXAMPLE,
    OUTPUT_RULES,
  ].join('\n\n');
  const userName = input.userName ?? input.turns.find((t) => t.role === 'user' && t.speaker)?.speaker;
  const agentName = input.agentName ?? input.turns.find((t) => t.role === 'agent' && t.speaker)?.speaker;
  const user = [
    `Current time: ${iso(input.now)}`,
    `User: ${userName ?? 'unknown name (write "The user")'}`,
    `Agent: ${agentName ?? 'unknown name (write "The agent")'}`,
    'Segment (one JSON object per turn, oldest first):',
    renderTurnLines(input.turns),
  ].join('\n');
  return { system, user };
}
