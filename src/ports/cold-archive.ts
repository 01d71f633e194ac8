import type { Scope, Turn } from '../core/types.ts';

/** A keyword hit over archived raw turns. `rank` is engine-specific: larger = better within one reply. */
export interface ColdHit {
  turn: Turn;
  rank: number;
}

/** Tier 3: verbatim archived turns, keyword-searchable. Archiving is an upsert by turnId. */
export interface ColdArchive {
  archive(scope: Scope, turns: readonly Turn[]): Promise<void>;
  /** Keyword search over the user's archived turns, best first. */
  search(scope: Scope, query: string, k: number): Promise<ColdHit[]>;
  count(scope: Scope): Promise<number>;
  forget(scope: Scope): Promise<void>;
  close(): Promise<void>;
}
