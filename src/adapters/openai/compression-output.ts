import { z } from 'zod';
import type { AcuDraft, CompressionInput } from '../../ports/extractor.ts';
import { toIsoOrUndefined } from './turn-lines.ts';

/** Strict structured-output schema for stage 3. */
export const compressionWireSchema = z.strictObject({
  acus: z.array(
    z.strictObject({
      text: z.string(),
      turnRefs: z.array(z.string()),
      validAt: z.string().nullable(),
    }),
  ),
});

/** The envelope a reply must have (else it is invalid and retried); ACUs are checked one by one. */
export const compressionReplySchema = z.object({ acus: z.array(z.unknown()) });

const replyAcu = z.object({
  text: z.string(),
  turnRefs: z.array(z.string()).nullish(),
  validAt: z.string().nullish(),
});

/** What survived validation, and how many ACUs were dropped (for logs). */
export interface AcusOutcome {
  acus: AcuDraft[];
  dropped: number;
}

/**
 * Keeps well-formed, non-empty, distinct ACUs. Unknown turn refs are removed; an ACU left with
 * none cites the whole segment, which is where it certainly came from (at most a few turns).
 */
export function toAcuDrafts(rawAcus: readonly unknown[], input: CompressionInput): AcusOutcome {
  const turnIds = input.turns.map((t) => t.turnId);
  const known = new Set(turnIds);
  const seen = new Set<string>();
  const acus: AcuDraft[] = [];
  for (const raw of rawAcus) {
    const parsed = replyAcu.safeParse(raw);
    if (!parsed.success) continue;
    const text = parsed.data.text.replace(/\s+/g, ' ').trim();
    if (text === '' || seen.has(text)) continue;
    seen.add(text);
    const refs = [...new Set(parsed.data.turnRefs ?? [])].filter((id) => known.has(id));
    const draft: AcuDraft = { text, turnRefs: refs.length > 0 ? refs : [...turnIds] };
    const validAt = toIsoOrUndefined(parsed.data.validAt);
    if (validAt) draft.validAt = validAt;
    acus.push(draft);
  }
  return { acus, dropped: rawAcus.length - acus.length };
}
