import type { SearchResult, Turn } from '../core/types.ts';
import type { CosineScale } from '../ports/embedder.ts';
import { cosine } from './cosine.ts';
import { byScoreThenNewest, FIELD_MATCH_SCORE, RECENT_BASE_SCORE, RECENT_SPAN, saidTurns, terms, turnResult, WEAK_MATCH_SCORE, wordShare, type TierClock } from './fact-search.ts';
import type { SemanticVectors } from './semantic-tiers.ts';

/**
 * Scores of the fact and recent tiers by meaning: the query's vector (the one the ACU leg
 * embedded) against the fields' and turns' (semantic-tiers.ts), read on the embedder's measured
 * cosine scale and put in the lexical scores' bands, so a result means the same whichever way it
 * matched, and takes the better of the two.
 */

/**
 * An agent's question about a thing carries its words but not its value: unanswered, it ranks at
 * this share of its match, below a caller statement that matches half as well.
 */
const AGENT_QUESTION_FACTOR = 0.5;

/**
 * How related two texts are on the embedder's scale: null at or below `floor` (what unrelated
 * pairs reach), rising linearly to 1 at `strong` (what most related pairs reach), 1 above it.
 */
export function strength(cos: number, scale: CosineScale): number | null {
  if (!(cos > scale.floor)) return null;
  return Math.min(1, (cos - scale.floor) / Math.max(1e-6, scale.strong - scale.floor));
}

/**
 * A field's score for a question by meaning, in the fact bands: at `strong` or above the question
 * is about the field (from FIELD_MATCH_SCORE, as when it names it), between floor and strong it
 * is a weak match (from WEAK_MATCH_SCORE, as a hint or value match), below the floor none.
 */
export function fieldsByMeaning(query: Float32Array, v: SemanticVectors): (field: string) => number | null {
  const { floor, strong } = v.scale;
  const scores = new Map<string, number | null>();
  for (const [name, vector] of v.fields) {
    const cos = cosine(query, vector);
    const s = strength(cos, v.scale);
    scores.set(name, s === null ? null : cos >= strong ? FIELD_MATCH_SCORE + 0.15 * Math.min(1, (cos - strong) / Math.max(1e-6, strong - floor)) : WEAK_MATCH_SCORE + 0.3 * s);
  }
  return (field) => scores.get(field) ?? null;
}

/**
 * Turn results by words and meaning, with who said what: a turn's match is the better of its
 * share of the query's words and its strength of meaning (turns beyond the embedded ones: words
 * only). The caller's reply to an agent's question answers what was asked: it takes the
 * question's match when that is higher and carries the question in its text, and the question
 * takes no slot of its own; an unanswered agent question ranks at AGENT_QUESTION_FACTOR.
 */
export function recentByMeaning(turns: readonly Turn[], query: string, queryVector: Float32Array, v: SemanticVectors, clock: TierClock): SearchResult[] {
  const q = new Set(terms(query));
  const said = saidTurns(turns, clock);
  const own = new Map<string, number | null>();
  for (const t of said) {
    const vector = v.turns.get(t.turnId);
    own.set(t.turnId, better(q.size > 0 ? wordShare(q, t) : null, vector ? strength(cosine(queryVector, vector), v.scale) : null));
  }
  const bySeq = new Map(said.map((t) => [`${t.sessionId}#${t.seq}`, t]));
  const replyTo = (t: Turn): Turn | undefined => {
    const next = bySeq.get(`${t.sessionId}#${t.seq + 1}`);
    return next?.role === 'user' ? next : undefined;
  };
  const questionOf = new Map<string, Turn>();
  for (const t of said) {
    const reply = isAgentQuestion(t) ? replyTo(t) : undefined;
    if (reply) questionOf.set(reply.turnId, t);
  }
  const out: SearchResult[] = [];
  for (const t of said) {
    const mine = own.get(t.turnId) ?? null;
    const question = questionOf.get(t.turnId);
    const asked = question ? (own.get(question.turnId) ?? null) : null;
    // A reply found through its question says so: "Koramangala." alone does not say what it answers.
    if (question && asked !== null && (mine === null || asked > mine)) out.push(turnResult(t, RECENT_BASE_SCORE + RECENT_SPAN * asked, question));
    else if (isAgentQuestion(t)) {
      if (mine !== null && !replyTo(t)) out.push(turnResult(t, RECENT_BASE_SCORE + RECENT_SPAN * mine * AGENT_QUESTION_FACTOR));
    } else if (mine !== null) out.push(turnResult(t, RECENT_BASE_SCORE + RECENT_SPAN * mine));
  }
  return byScoreThenNewest(out);
}

/** An agent turn that ends by asking: what the caller says next answers it. */
function isAgentQuestion(t: Turn): boolean {
  return t.role === 'agent' && t.text.trim().endsWith('?');
}

function better(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.max(a, b);
}
