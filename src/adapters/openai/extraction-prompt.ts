import { iso } from '../../core/clock.ts';
import type { FieldDef } from '../../core/schema.ts';
import type { ExtractionInput } from '../../ports/extractor.ts';
import { renderTurnLines } from './turn-lines.ts';

const VALUE_RULES = `Value by field type:
- string: a short canonical phrase (e.g. "3BHK flat", "Whitefield, Bangalore").
- number: a JSON number.
- money: {"amount": number in whole currency units, "currency": ISO 4217 code}; expand Indian units ("80 lakhs" = 8000000, "1.2 crore" = 12000000).
- date: "YYYY-MM-DD". datetime: ISO 8601 with an offset or Z. Resolve relative expressions ("tomorrow at 5", "next Friday") against the ts of the turn that says them.
- boolean: true or false.
- enum: exactly one of the listed values.`;

const SOURCE_RULES = `source:
- "explicit": the user directly stated it ("My budget is 80 lakhs").
- "confirmed": the user agreed to a value the agent proposed or read back ("Yes, that's right").
- "inferred": only implied by an indirect signal, or heard with low asrConfidence (the speech recogniser was unsure of the words).
Statements made only by the agent are not facts about the user unless the user confirms them. An agent turn marked interrupted was cut off: only its text was heard.`;

const OTHER_RULES = `qualifier: for a field "keyed by" a qualifier, the qualifier's value the fact is about (e.g. the property it concerns); otherwise null.
validFrom: the world time the fact became true, ISO 8601, when the conversation states or implies it ("approved last week", "since March", computed from that turn's ts); otherwise null (the turn's time is used).
evidence: the turnId values of the turns the fact comes from, copied exactly; at least one.
If a value changes during the conversation, output each value as its own fact, oldest first.
Output only facts supported by the turns; do not guess values. Return {"facts": []} when no field is mentioned.`;

/** System and user messages for stage 1: the schema, the rules, the known profile and the turns. */
export function buildExtractionPrompt(input: ExtractionInput): { system: string; user: string } {
  const system = [
    'You extract structured facts about the user from a conversation between the user and a voice agent, for the agent\'s long-term memory.',
    'Reply with JSON matching the response schema: {"facts": [{field, qualifier, value, source, validFrom, evidence}]}.',
    `Fields (extract only these, using the exact field name):\n${input.schema.fields.map(describeField).join('\n')}`,
    VALUE_RULES,
    SOURCE_RULES,
    OTHER_RULES,
  ].join('\n\n');
  const user = [
    `Current time: ${iso(input.now)}`,
    `Known profile: ${JSON.stringify(input.knownProfile)}`,
    'Conversation (one JSON object per turn, oldest first):',
    renderTurnLines(input.turns),
  ].join('\n');
  return { system, user };
}

function describeField(f: FieldDef): string {
  const parts = [`- ${f.name} (${f.category}, ${f.type}`];
  if (f.type === 'enum' && f.values) parts.push(`: one of ${f.values.map((v) => JSON.stringify(v)).join(', ')}`);
  if (f.keyBy) parts.push(`, keyed by ${f.keyBy}`);
  parts.push(`): ${f.description}`);
  if (f.hints && f.hints.length > 0) parts.push(` Cues: ${f.hints.map((h) => JSON.stringify(h)).join(', ')}.`);
  if (f.category === 'profile') parts.push(' Stable attribute of the user.');
  if (f.category === 'ephemeral') parts.push(' Short-lived (e.g. an appointment).');
  return parts.join('');
}
