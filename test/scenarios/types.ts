import type { ExtractionSchema } from '../../src/core/extraction-schema.ts';
import type { ScriptTurn } from '../conversations/support.ts';

/** A value as the checks write it: strings as they are, money as "80,00,000 INR" → `8000000 INR`. */
export type Shown = string;

/**
 * One scripted multi-call conversation that exercises one memory rule, with
 * what must hold afterwards in each of the three places the agent reads memory.
 */
export interface Scenario {
  id: string;
  domain: 'real-estate' | 'healthcare' | 'rentals' | 'support';
  /** The rule of the contract ("Memory semantics") this scenario checks, in a few words. */
  rule: string;
  /** A shipped schema (config/schemas/<name>.json) or an inline one. */
  schema: string | ExtractionSchema;
  calls: ScriptTurn[][];
  /**
   * The checks run while the last call is still open: its turns are buffered, nothing of it is
   * extracted (no ACU, no fact), so only the recent tier can answer from it.
   */
  searchDuringCall?: boolean;
  /**
   * 'encoder': the rule needs an embedder that matches meaning (a paraphrase shares no words);
   * skipped, saying so, where the suite embeds by hashing.
   */
  embedder?: 'encoder';
  /** Timeline (history=true): for each entity key, its values and statuses (and sources, when given) in any order. */
  timeline?: Record<string, Array<[Shown, string] | [Shown, string, string]>>;
  /** The next call's context: current facts by key, inferred ones, text the block must (not) carry. */
  context?: { facts?: Record<string, Shown>; factsLack?: string[]; possibly?: Record<string, Shown>; blockHas?: string[]; blockLacks?: string[] };
  /**
   * memory_search: the first result must state `firstHas` and be current (`source` when given:
   * fact, recent, acu, hybrid, cold); `asOf` for history questions; `outdated`: a result stating
   * `has` must be marked outdated with `now` as the current value (null: none) and rank below the first.
   */
  search?: { query: string; asOf?: string; firstHas: string; firstLacks?: string; source?: string; outdated?: { has: string; now: Shown | null } };
}
