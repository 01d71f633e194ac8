import type { Scope } from '../core/types.ts';

/**
 * The preloaded context cache read once per session start (tier 1): a plain byte
 * store per user. What the bytes hold (the context, pre-serialised so session
 * start never decodes it) is the memory layer's business (memory/encoded-context.ts):
 * the service encodes once, every adapter stores the same bytes.
 */
export interface ContextCache {
  get(scope: Scope): Promise<Uint8Array | null>;
  set(scope: Scope, bytes: Uint8Array): Promise<void>;
  delete(scope: Scope): Promise<void>;
  close(): Promise<void>;
}
