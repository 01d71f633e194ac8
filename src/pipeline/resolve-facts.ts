import type { ExtractionSchema, FieldDef } from '../core/extraction-schema.ts';
import type { Turn } from '../core/types.ts';
import { iso } from '../core/clock.ts';
import type { ExtractedFact } from '../ports/extractor.ts';
import type { ResolvedFact } from '../memory/supersession.ts';
import { normalizeValue } from '../text/values.ts';

/** Knobs of fact resolution that come from configuration. */
export interface ResolveOptions {
  /** User turns recognised with less confidence than this only yield `inferred` facts. */
  lowAsrConfidence: number;
}

/**
 * Validate and normalise stage-1 output against the schema (the LLM-output edge):
 * unknown fields, values that do not fit the field's type and facts without
 * evidence in the window are dropped; keys get their qualifier; `validFrom`
 * falls back to the evidence turn's time; a fact resting only on low-confidence
 * speech is downgraded to `inferred` (docs/protocol.md, voice-native fields); `statedAt` is when
 * the evidence was said, and a speaker's correction mark is kept.
 */
export function resolveFacts(facts: readonly ExtractedFact[], schema: ExtractionSchema, turns: readonly Turn[], options: ResolveOptions): ResolvedFact[] {
  const fields = new Map<string, FieldDef>(schema.fields.map((f) => [f.name, f]));
  const byId = new Map<string, Turn>(turns.map((t) => [t.turnId, t]));
  const out: ResolvedFact[] = [];
  for (const fact of facts) {
    const field = fields.get(fact.field);
    if (!field) continue;
    const evidenceTurns = fact.evidence.map((id) => byId.get(id)).filter((t): t is Turn => t !== undefined);
    if (evidenceTurns.length === 0) continue;
    const refTs = Math.max(...evidenceTurns.map((t) => t.ts));
    const value = normalizeValue(field, fact.value, refTs);
    if (value === null) continue;
    // A keyed field stated without its qualifier ("the rent is 40 thousand" with one flat in the talk)
    // keeps the bare field key: dropping it lost the value; guessing a qualifier could file it under the wrong entity.
    const qualifier = field.keyBy ? normaliseQualifier(fact.qualifier) : '';
    const validFromMs = fact.validFrom ? Date.parse(fact.validFrom) : NaN;
    const validFrom = iso(Number.isFinite(validFromMs) ? validFromMs : refTs);
    const resolved: ResolvedFact = {
      key: qualifier ? `${field.name}:${qualifier}` : field.name,
      field,
      value,
      source: downgradeForSpeech(fact.source, evidenceTurns, options.lowAsrConfidence),
      validFrom,
      statedAt: iso(refTs),
      evidence: [...new Set(evidenceTurns.map((t) => t.turnId))],
    };
    if (fact.correction === true) resolved.correction = true;
    if (fact.ended === true) resolved.ended = true;
    out.push(resolved);
  }
  // Statement order: the newest statement is current truth (docs/protocol.md, Memory semantics).
  return out.sort((a, b) => (a.statedAt ?? '').localeCompare(b.statedAt ?? ''));
}

/** A qualifier is part of an entity key: stable lower-case form, so "12 MG Road" and "12 mg road" match. */
export function normaliseQualifier(q: string | undefined): string {
  return (q ?? '')
    .trim()
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/[.,;]+$/, '');
}

function downgradeForSpeech(source: ExtractedFact['source'], evidence: readonly Turn[], low: number): ExtractedFact['source'] {
  if (source === 'inferred') return source;
  const userTurns = evidence.filter((t) => t.role === 'user');
  if (userTurns.length === 0) return source;
  const allLow = userTurns.every((t) => t.asrConfidence !== undefined && t.asrConfidence < low);
  return allLow ? 'inferred' : source;
}
