import type { Acu, FactValue, Scope, Turn } from '../core/types.ts';
import { iso } from '../core/clock.ts';
import { stableHash, stableUuid } from '../core/ids.ts';
import type { AcuIndex } from '../ports/acu-index.ts';
import type { Embedder } from '../ports/embedder.ts';
import type { AcuDraft, Extractor } from '../ports/extractor.ts';

/** Stage 3 outcome: ACUs to index and how many near-duplicates were suppressed. */
export interface CompressOutcome {
  acus: Acu[];
  suppressed: number;
  /** The ACUs carry the embedder's cheap vector (`embedLexical`): they wait to be re-embedded. */
  lexical: boolean;
}

/** Inputs of stage 3 beyond the window itself. */
export interface CompressDeps {
  extractor: Extractor;
  embedder: Embedder;
  acus: AcuIndex;
}

/**
 * Split turns into consecutive segments of at most `size` turns (docs/design.md §3: ≤ 5). A turn
 * for which `keepWithNext` holds (a question) does not end a segment when the turn after it
 * exists: the segment ends before it, so the question and its answer are compressed together.
 * A segment never shrinks below half its size for this.
 */
export function segment<T>(turns: readonly T[], size: number, keepWithNext: (t: T) => boolean = () => false): T[][] {
  const out: T[][] = [];
  let i = 0;
  while (i < turns.length) {
    let end = Math.min(i + size, turns.length);
    if (end < turns.length && size > 1) {
      let cut = end;
      while (cut - i > Math.max(1, Math.floor(size / 2)) && keepWithNext(turns[cut - 1]!)) cut--;
      if (!keepWithNext(turns[cut - 1]!)) end = cut;
    }
    out.push(turns.slice(i, end));
    i = end;
  }
  return out;
}

/** A turn that ends on a question: its answer gives it meaning, and its words find the answer. */
const asks = (t: Turn): boolean => /\?["')\]]*\s*$/.test(t.text.trim());

/** Whitespace- and case-folded text: the identity of an ACU for its content hash. */
export function contentHashOf(text: string): string {
  return stableHash(text.trim().toLowerCase().replace(/\s+/g, ' '));
}

/** Deterministic ACU id, so a re-delivered job upserts the same points instead of adding new ones. */
export function acuIdOf(scope: Scope, contentHash: string): string {
  return stableUuid(scope.tenantId, scope.agentId, scope.userId, contentHash);
}

/**
 * Stage 3: segments compressed in parallel, ACUs embedded in one batch, then
 * near-duplicates suppressed (cosine ≥ threshold against the index and against
 * earlier ACUs of the same window). Ids are deterministic, so a retried window
 * upserts the same points rather than adding new ones.
 */
export async function compressWindow(
  deps: CompressDeps,
  scope: Scope,
  window: readonly Turn[],
  opts: { segmentTurns: number; dedupThreshold: number; now: number; knownProfile: Readonly<Record<string, FactValue>>; lexical?: boolean },
): Promise<CompressOutcome> {
  const embedLexical = opts.lexical ? deps.embedder.embedLexical?.bind(deps.embedder) : undefined;
  const lexical = embedLexical !== undefined;
  if (window.length === 0) return { acus: [], suppressed: 0, lexical };
  const userName = typeof opts.knownProfile['full_name'] === 'string' ? opts.knownProfile['full_name'] : typeof opts.knownProfile['name'] === 'string' ? opts.knownProfile['name'] : undefined;
  const segments = segment(window, opts.segmentTurns, asks);
  const drafts = (await Promise.all(segments.map((turns) => deps.extractor.compress({ turns, now: opts.now, ...(userName ? { userName } : {}) })))).flat();
  const byId = new Map(window.map((t) => [t.turnId, t]));
  const cleaned = dedupeDrafts(
    drafts.filter((d) => d.text.trim().length > 0),
    byId,
  );
  if (cleaned.length === 0) return { acus: [], suppressed: 0, lexical };
  const texts = cleaned.map((d) => d.text);
  const vectors = await (embedLexical ? embedLexical(texts) : deps.embedder.embed(texts));
  // One batched lookup for the window: the index does not change while the window is decided
  // (the caller upserts what is kept), so each draft's nearest neighbour is known up front.
  const nearestOf = await deps.acus.nearestMany(scope, vectors, 1);
  const kept: Acu[] = [];
  let suppressed = 0;
  for (let i = 0; i < cleaned.length; i++) {
    const draft = cleaned[i]!;
    const embedding = vectors[i]!;
    const contentHash = contentHashOf(draft.text);
    const id = acuIdOf(scope, contentHash);
    if (kept.some((a) => dot(a.embedding, embedding) >= opts.dedupThreshold)) {
      suppressed++;
      continue;
    }
    const [nearest] = nearestOf[i] ?? [];
    // Its own id means an earlier attempt of this window indexed it and died before the
    // commit: keep it (the upsert is a no-op) so the committed counters stay true.
    if (nearest && nearest.acu.id !== id && nearest.score >= opts.dedupThreshold) {
      suppressed++;
      continue;
    }
    const refs = draft.turnRefs.filter((r) => byId.has(r));
    const lastRef = refs.map((r) => byId.get(r)!.ts).reduce((a, b) => Math.max(a, b), 0);
    kept.push({
      id,
      text: draft.text.trim(),
      embedding,
      turnRefs: refs,
      sessionId: byId.get(refs[0] ?? '')?.sessionId ?? window[window.length - 1]!.sessionId,
      validAt: draft.validAt && Number.isFinite(Date.parse(draft.validAt)) ? iso(Date.parse(draft.validAt)) : iso(lastRef || window[window.length - 1]!.ts),
      createdAt: iso(opts.now),
      contentHash,
    });
  }
  return { acus: kept, suppressed, lexical };
}

/** Drop exact repeats and drafts that cite no turn of the window (model output is checked at the edge). */
function dedupeDrafts(drafts: readonly AcuDraft[], byId: ReadonlyMap<string, Turn>): AcuDraft[] {
  const seen = new Set<string>();
  const out: AcuDraft[] = [];
  for (const d of drafts) {
    const h = contentHashOf(d.text);
    if (seen.has(h) || !d.turnRefs.some((r) => byId.has(r))) continue;
    seen.add(h);
    out.push(d);
  }
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
