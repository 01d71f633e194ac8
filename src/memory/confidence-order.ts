import type { FactSource } from '../core/types.ts';

/**
 * The confidence order of a fact's source (docs/protocol.md: inferred < explicit < confirmed).
 * Merging the same value keeps the strongest source.
 */
export const CONFIDENCE_ORDER: Record<FactSource, number> = { inferred: 0, explicit: 1, confirmed: 2 };

/**
 * Who may replace whom. A new explicit statement is still the user's own word, so it may
 * change a confirmed value (a budget confirmed last month can be raised today). Only
 * `inferred` can never displace a stronger value: it waits beside it as a candidate.
 */
export const REPLACE_RANK: Record<FactSource, number> = { inferred: 0, explicit: 1, confirmed: 1 };
