import type { Acu, DeferredAcu } from '../core/types.ts';
import type { ExtractionJob } from '../ports/job-bus.ts';
import type { Embedder } from '../ports/embedder.ts';

/**
 * How a run spends the embedder's costly part (the sentence encoder of `fused`), which costs
 * ~10× the rest of extraction per ACU. A lane that embedded every ACU with it fell behind at
 * 1,000 turns/s and archived almost nothing (issue 17); a lane that is behind now indexes new
 * ACUs with the cheap part (`Embedder.embedLexical`) and re-embeds them when the CPU allows, so
 * memory keeps up at lexical cost and gains meaning after the burst.
 * - `now`: new ACUs get the full vector; up to `upgradeBatch` deferred ones are re-embedded.
 * - `defer`: new ACUs get the cheap vector and join the user's deferred list; none re-embedded.
 * - `all` (a flush: "extract now, wait for the commit"): full vectors, every deferred ACU re-embedded.
 */
export type SemanticMode = 'now' | 'defer' | 'all';

/** `embeddings.deferAfterMs` / `upgradeBatch` / `maxDeferred`. */
export interface DeferralOptions {
  /** A job that waited longer than this finds the lane behind (0: never defer). */
  deferAfterMs: number;
  /** Deferred ACUs a `now` run re-embeds at most. */
  upgradeBatch: number;
  /** Deferred ACUs a user's hot document holds at most; older ones keep their cheap vector for good. */
  maxDeferred: number;
}

/**
 * A job's mode: `defer` when it waited past `deferAfterMs` in the queue (the lane is behind for
 * everyone) or it continues a capped run (this user is far behind), else `now`.
 */
export function modeOfJob(job: Pick<ExtractionJob, 'reason' | 'requestedAt'>, now: number, options: Pick<DeferralOptions, 'deferAfterMs'>): SemanticMode {
  if (options.deferAfterMs <= 0) return 'now';
  return job.reason === 'backlog' || now - job.requestedAt > options.deferAfterMs ? 'defer' : 'now';
}

/** Whether this run indexes new ACUs with the cheap vector: only when deferring and the embedder has one. */
export function indexesLexically(mode: SemanticMode, embedder: Embedder): boolean {
  return mode === 'defer' && typeof embedder.embedLexical === 'function';
}

/** Deferred ACUs this run re-embeds. */
export function upgradeCount(mode: SemanticMode, deferred: number, options: Pick<DeferralOptions, 'upgradeBatch'>): number {
  if (mode === 'all') return deferred;
  return mode === 'now' ? Math.min(deferred, options.upgradeBatch) : 0;
}

/** Re-embed the oldest `count` deferred ACUs with the full embedder: the ACUs to upsert (same ids) and what stays deferred. */
export async function upgradeDeferred(embedder: Embedder, deferred: readonly DeferredAcu[], count: number): Promise<{ upgraded: Acu[]; rest: DeferredAcu[] }> {
  const take = deferred.slice(0, count);
  if (take.length === 0) return { upgraded: [], rest: [...deferred] };
  const vectors = await embedder.embed(take.map((a) => a.text));
  return { upgraded: take.map((a, i) => ({ ...a, embedding: vectors[i]! })), rest: deferred.slice(count) };
}

/** The deferred list a run leaves: what it did not re-embed, then its new cheap ACUs, oldest dropped past `max`. */
export function nextDeferred(rest: readonly DeferredAcu[], added: readonly Acu[], max: number): DeferredAcu[] {
  const all = [...rest, ...added.map(withoutEmbedding)];
  return all.length > max ? all.slice(all.length - max) : all;
}

function withoutEmbedding(acu: Acu): DeferredAcu {
  const { embedding: _embedding, ...rest } = acu;
  return rest;
}
