import { stableHash } from '../../core/ids.ts';
import type { Scope } from '../../core/types.ts';
import type { ExtractionJob } from '../../ports/job-bus.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** JSON payload of a job message (small, readable with the `nats` CLI). */
export function encodeJob(job: ExtractionJob): Uint8Array {
  return encoder.encode(JSON.stringify(job));
}

/** Parses and checks a job payload; throws on anything that is not a job. */
export function decodeJob(data: Uint8Array): ExtractionJob {
  const value = JSON.parse(decoder.decode(data)) as Partial<ExtractionJob> | null;
  const scope = value?.scope as Partial<Scope> | undefined;
  if (typeof scope?.tenantId !== 'string' || typeof scope.agentId !== 'string' || typeof scope.userId !== 'string' || typeof value?.reason !== 'string' || typeof value.requestedAt !== 'number') {
    throw new Error('not an extraction job');
  }
  return { scope: { tenantId: scope.tenantId, agentId: scope.agentId, userId: scope.userId }, reason: value.reason, requestedAt: value.requestedAt };
}

/** KV key and msgID stem of a job key: a hash, since ids may hold characters neither allows. */
export function generationKey(key: string): string {
  return stableHash(key);
}
