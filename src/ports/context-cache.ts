import type { EncodedContext, Scope, SessionContext } from '../core/types.ts';

/**
 * The preloaded context cache read once per session start (tier 1). Holds derived
 * data only. `set` takes the built context; `get` hands back its stored encoding
 * (see memory/encoded-context.ts) so session start never decodes it.
 */
export interface ContextCache {
  get(scope: Scope): Promise<EncodedContext | null>;
  set(scope: Scope, context: SessionContext): Promise<void>;
  delete(scope: Scope): Promise<void>;
  close(): Promise<void>;
}
