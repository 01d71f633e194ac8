import { z } from 'zod';
import { readFileSync } from 'node:fs';
import { MemgateError } from '../core/errors.ts';
import { ROLES } from '../core/types.ts';

const time = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const ms = typeof v === 'number' ? v : Date.parse(v);
  if (!Number.isFinite(ms)) ctx.addIssue({ code: 'custom', message: `not a time: ${v}` });
  return ms;
});

const turnSchema = z.strictObject({
  role: z.enum(ROLES as [string, ...string[]]).transform((r) => r as (typeof ROLES)[number]),
  text: z.string().min(1),
  ts: time,
  speaker: z.string().optional(),
  turnId: z.string().optional(),
  asrConfidence: z.number().min(0).max(1).optional(),
  interrupted: z.boolean().optional(),
});

/** A replayable transcript: several calls of one user with real timestamps (config/examples/). */
export const transcriptSchema = z.strictObject({
  description: z.string().optional(),
  tenantId: z.string().default('default'),
  agentId: z.string().min(1),
  userId: z.string().min(1),
  calls: z.array(z.strictObject({ sessionId: z.string().optional(), turns: z.array(turnSchema).min(1) })).min(1),
  searches: z.array(z.string()).default([]),
});

export type Transcript = z.infer<typeof transcriptSchema>;

/** Read and validate a transcript file, naming the bad path on error. */
export function readTranscript(path: string): Transcript {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new MemgateError('bad_request', `cannot read transcript ${path}: ${(err as Error).message}`, { cause: err });
  }
  const parsed = transcriptSchema.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new MemgateError('bad_request', `transcript ${path}: ${i?.path.join('.')}: ${i?.message}`);
  }
  return parsed.data;
}
