import type { Scope, SessionContext } from '../core/types.ts';

/** The preloaded context cache read once per session start (tier 1). Holds derived data only. */
export interface ContextCache {
  get(scope: Scope): Promise<SessionContext | null>;
  set(scope: Scope, context: SessionContext): Promise<void>;
  delete(scope: Scope): Promise<void>;
  close(): Promise<void>;
}
