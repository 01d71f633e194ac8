import { iso } from '../../core/clock.ts';
import type { FieldDef } from '../../core/extraction-schema.ts';
import type { ExtractionInput } from '../../ports/extractor.ts';
import { renderTurnLines } from './turn-lines.ts';

const VALUE_RULES = `Value by field type:
- string: a short canonical phrase (e.g. "3BHK flat", "Whitefield, Bangalore").
- number: a JSON number.
- money: {"amount": number in whole currency units, "currency": ISO 4217 code}. Expand spoken and written units: "80 lakhs" = 8000000, "1.2 crore" = 12000000, "fifty lakh" = 5000000, "40 thousand" = 40000, "45,000" = 45000, "90k" = 90000, "2 million" = 2000000; lakh/lac/crore mean INR. "around", "about", "roughly", "approximately" before an amount keep the amount ("Around 40 thousand rupees" = 40000 INR) and do not make the fact inferred.
- date: "YYYY-MM-DD". datetime: ISO 8601 with an offset or Z. Resolve relative expressions ("tomorrow at 5", "next Friday") against the ts of the turn that says them.
- boolean: true or false.
- enum: exactly one of the listed values.`;

const SOURCE_RULES = `source (confidence order: inferred < explicit < confirmed):
- "explicit": the user directly stated it ("My budget is 80 lakhs").
- "confirmed": the agent stated or read back the value and the user's very next turn agreed to it ("So your budget is 80 lakhs?" → "Yes, that's right"); evidence is both turns.
- "inferred": a hedge ("I think maybe 60", "probably", "might", "not sure"), a question ("Can I afford 2 crore?"), only implied by an indirect signal, or every user turn it rests on has asrConfidence below 0.6 (the speech recogniser was unsure of the words; a low-confidence "yes" confirms nothing).
Speakers: a value the agent states about itself (its own name, its office number, its company) is never a fact about the user. A value said only by the agent is no fact unless the user confirms it. An agent turn marked interrupted was cut off: only its text was heard.`;

const CORRECTION_RULES = `Corrections:
- Self-correction inside one turn: output only the corrected value, never the first one. "My date of birth is 12 March 1990, sorry, I meant 21 March 1990" → only 1990-03-21. The same for "not X but Y", "X, no, Y", "X — I mean Y", "I said X but it's Y".
- correction: true when the user marks the value as fixing something said or held before: "sorry, I meant", "no, it's", "actually", "correction", "not X but Y", "I said X but it's Y", a self-correction, or "No, 85 lakhs" to a value the agent read back. Otherwise false. A change in the world ("I moved to Pune", "my budget is now 80 lakhs") is no correction.
- ended: true when the user says a value no longer holds and names nothing in its place ("I stopped taking metformin", "I no longer work at Infosys", "I'm not on metformin anymore"): output that value (metformin) with ended true and validFrom when it stopped. Otherwise false.`;

const OTHER_RULES = `qualifier: for a field "keyed by" a qualifier, the qualifier's value the fact is about (e.g. the property it concerns); otherwise null. When one turn gives several values of a keyed field for different entities ("30,000 for the MG Road flat and 45,000 for the Indiranagar one"), output one fact per entity, each value with the qualifier named next to it in its own part of the sentence ("MG Road" → 30000, "Indiranagar" → 45000).
validFrom: the world time the fact became true, ISO 8601, when the conversation states or implies it, computed from the ts of the turn that says it: "two weeks ago" = 14 days before that ts, "last month" = one month before it, "a year ago" = one year before, "3 days back" = 3 days before, "since Monday" = the Monday on or before it, "approved last week" = 7 days before; otherwise null (the turn's time is used).
evidence: the turnId values of the turns the fact comes from, copied exactly; at least one, including the user turn that states or confirms it.
If a value changes during the conversation, output each value as its own fact, oldest first.
Output only facts supported by the turns; do not guess values. Return {"facts": []} when no field is mentioned.`;

/** System and user messages for stage 1: the schema, the rules, the known profile and the turns. */
export function buildExtractionPrompt(input: ExtractionInput): { system: string; user: string } {
  const system = [
    "You extract structured facts about the user from a conversation between the user and a voice agent, for the agent's long-term memory.",
    'Reply with JSON matching the response schema: {"facts": [{field, qualifier, value, source, validFrom, correction, ended, evidence}]}.',
    `Fields (extract only these, using the exact field name):\n${input.schema.fields.map(describeField).join('\n')}`,
    VALUE_RULES,
    SOURCE_RULES,
    CORRECTION_RULES,
    OTHER_RULES,
  ].join('\n\n');
  const user = [
    `Current time: ${iso(input.now)}`,
    `Known profile: ${JSON.stringify(input.knownProfile)}`,
    "Conversation (one JSON object per turn, oldest first; ts is the turn's ISO time, the anchor of its relative dates):",
    renderTurnLines(input.turns),
  ].join('\n');
  return { system, user };
}

function describeField(f: FieldDef): string {
  const parts = [`- ${f.name} (${f.category}, ${f.type}`];
  if (f.type === 'enum' && f.values) parts.push(`: one of ${f.values.map((v) => JSON.stringify(v)).join(', ')}`);
  if (f.keyBy) parts.push(`, keyed by ${f.keyBy}`);
  if (f.currency) parts.push(`, amounts without a currency are ${f.currency}`);
  parts.push(`): ${f.description}`);
  if (f.hints && f.hints.length > 0) parts.push(` Cues: ${f.hints.map((h) => JSON.stringify(h)).join(', ')}.`);
  if (f.category === 'profile') parts.push(' Stable attribute of the user.');
  if (f.category === 'ephemeral') parts.push(' Short-lived (e.g. an appointment).');
  return parts.join('');
}
