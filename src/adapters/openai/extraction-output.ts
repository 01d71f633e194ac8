import { z } from 'zod';
import type { FieldDef } from '../../core/extraction-schema.ts';
import type { FactSource, FactValue } from '../../core/types.ts';
import type { ExtractedFact, ExtractionInput } from '../../ports/extractor.ts';
import { toIsoOrUndefined } from './turn-lines.ts';

const FACT_SOURCES = ['explicit', 'confirmed', 'inferred'] as const satisfies readonly FactSource[];

const money = z.strictObject({ amount: z.number(), currency: z.string() });
const factValue = z.union([z.string(), z.number(), z.boolean(), money]);

/** Strict structured-output schema for stage 1: `field` is limited to the schema's names. */
export function extractionWireSchema(fieldNames: readonly [string, ...string[]]): z.ZodType {
  return z.strictObject({
    facts: z.array(
      z.strictObject({
        field: z.enum(fieldNames),
        qualifier: z.string().nullable(),
        value: factValue,
        source: z.enum(FACT_SOURCES),
        validFrom: z.string().nullable(),
        correction: z.boolean(),
        ended: z.boolean(),
        evidence: z.array(z.string()),
      }),
    ),
  });
}

/**
 * The envelope a reply must have (else it is invalid and retried). Facts stay unknown here and
 * are checked one by one, so one malformed fact costs that fact, not the whole window.
 */
export const extractionReplySchema = z.object({ facts: z.array(z.unknown()) });

const replyFact = z.object({
  field: z.string(),
  qualifier: z.string().nullish(),
  value: z.union([z.string(), z.number(), z.boolean(), z.object({ amount: z.number(), currency: z.string() })]),
  source: z.enum(FACT_SOURCES),
  validFrom: z.string().nullish(),
  // Lenient: a model that leaves it out (or an older prompt) means "no correction".
  correction: z.boolean().nullish(),
  ended: z.boolean().nullish(),
  evidence: z.array(z.string()),
});

/** What survived validation, and how many facts were dropped (for logs). */
export interface FactsOutcome {
  facts: ExtractedFact[];
  dropped: number;
}

/**
 * Keeps the facts that are well-formed, name a schema field and cite at least one input turn.
 * Unknown evidence ids are removed; a fact left with none is dropped (ungrounded). The speaker
 * and confidence rules of the prompt are enforced here too, since model output is untrusted: a
 * fact resting on no user turn is the agent's word, not the user's (dropped), and one resting
 * only on user turns heard below `lowAsrConfidence` is at most `inferred`.
 */
export function toExtractedFacts(rawFacts: readonly unknown[], input: ExtractionInput, lowAsrConfidence = 0.6): FactsOutcome {
  const fields = new Map<string, FieldDef>(input.schema.fields.map((f) => [f.name, f]));
  const turns = new Map(input.turns.map((t) => [t.turnId, t]));
  const facts: ExtractedFact[] = [];
  for (const raw of rawFacts) {
    const parsed = replyFact.safeParse(raw);
    if (!parsed.success) continue;
    const f = parsed.data;
    const def = fields.get(f.field);
    if (!def) continue;
    const evidence = [...new Set(f.evidence)].filter((id) => turns.has(id));
    const userTurns = evidence.map((id) => turns.get(id)!).filter((t) => t.role === 'user');
    if (userTurns.length === 0) continue;
    const misheard = userTurns.every((t) => t.asrConfidence !== undefined && t.asrConfidence < lowAsrConfidence);
    if (typeof f.value === 'string' && f.value.trim() === '') continue;
    const value: FactValue = typeof f.value === 'object' ? { amount: f.value.amount, currency: f.value.currency } : f.value;
    const fact: ExtractedFact = { field: f.field, value, source: misheard ? 'inferred' : f.source, evidence };
    const qualifier = f.qualifier?.trim();
    if (def.keyBy && qualifier) fact.qualifier = qualifier;
    const validFrom = toIsoOrUndefined(f.validFrom);
    if (validFrom) fact.validFrom = validFrom;
    if (f.correction === true) fact.correction = true;
    if (f.ended === true) fact.ended = true;
    facts.push(fact);
  }
  return { facts, dropped: rawFacts.length - facts.length };
}
