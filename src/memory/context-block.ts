import { iso } from '../core/clock.ts';
import { speakerLabel } from '../core/speaker.ts';
import { estimateTokens } from '../core/tokens.ts';
import { turnDefect } from '../core/turn-check.ts';
import type { ContextFact, FactValue, HotDocument, OutdatedMark, SessionContext, SessionSummary, TemporalEntity, Turn } from '../core/types.ts';
import { annotate, factState, keyLabel, outdatedMarks, type FactState } from './fact-state.ts';
import { memorySearchTool } from '../core/search-tool.ts';
import { activeEntities } from './supersession.ts';
import { formatValue } from '../text/values.ts';
import { fitSentences, splitSentences, summarySentences } from '../text/sentences.ts';

/** Inputs of a context build besides the hot document. */
export interface BuildContextOptions {
  /** System time (epoch ms): what counts as expired. */
  now: number;
  contextWindowTurns: number;
  /** Turns still in the buffer (not yet extracted): the freshest part of the conversation. */
  bufferedTurns?: readonly Turn[];
}

/** Token budget of the context block; a rich user lands near ~800 (paper §1.1), trimming starts above this. */
export const CONTEXT_BLOCK_TOKEN_BUDGET = 900;

const MAX_PROFILE_LINES = 15;
const MAX_FACT_LINES = 15;
const MAX_POSSIBLY_LINES = 8;
const MAX_SUMMARIES = 3;
const MAX_VALUE_CHARS = 80;
const MAX_SUMMARY_CHARS = 240;
const MAX_TURN_CHARS = 160;

type RecentTurn = SessionContext['recent'][number];

/**
 * Session start payload (docs/design.md §1, §4) from one hot document plus the buffered
 * turns: current profile, active unexpired facts split by source (explicit/confirmed
 * vs inferred), the last `contextWindowTurns` turns, summaries, the memory_search
 * tool, and a stratified plain-text `contextBlock`. Superseded and expired facts never
 * appear; a recent turn that only evidences outdated facts is marked in the block.
 */
export function buildSessionContext(doc: HotDocument | null, opts: BuildContextOptions): SessionContext {
  const { now } = opts;
  const state = factState(doc?.entities ?? [], now);
  const active = doc ? activeEntities(doc.entities, now) : [];
  active.sort((a, b) => Date.parse(b.validFrom) - Date.parse(a.validFrom) || a.key.localeCompare(b.key, 'en', { numeric: true }));
  // Profile values have their own section; a doubtful profile value waiting beside the current one is still a "possibly".
  const facts = active.filter((e) => e.category !== 'profile' && e.source !== 'inferred').map(toContextFact);
  const possibly = active.filter((e) => e.source === 'inferred' && (e.category !== 'profile' || state.current.get(e.key) !== e)).map(toContextFact);
  const expiries = active.flatMap((e) => (e.expiresAt === null ? [] : [Date.parse(e.expiresAt)]));
  const profile: Record<string, FactValue> = {};
  for (const [k, entry] of Object.entries(doc?.profile ?? {})) profile[k] = entry.value;
  // A defective turn (awaiting quarantine, see pipeline/quarantine.ts, or kept by an older version) must not fail the call's start.
  const usable = (turns: readonly Turn[]) => turns.filter((t) => turnDefect(t) === null);
  const recent = recentTurns(usable(doc?.recent ?? []), usable(opts.bufferedTurns ?? []), opts.contextWindowTurns, state);
  // Summaries are written once; a fact they state that changed since is annotated at every build.
  const summaries = (doc?.summaries ?? []).map((s) => ({ ...s, text: annotateSentences(state, summarySentences(s.text)).join(' ') }));

  return {
    profile,
    facts,
    possibly,
    recent,
    summaries,
    contextBlock: renderBlock(doc, { facts, possibly, recent, summaries: doc?.summaries ?? [], now, state }),
    tools: [memorySearchTool()],
    version: doc?.version ?? 0,
    builtAt: now,
    expiresAt: expiries.length > 0 ? Math.min(...expiries) : null,
  };
}

/**
 * Cache read check. A cached context whose earliest ephemeral fact has expired is
 * returned as null so the caller rebuilds from the hot document: the cache holds no
 * per-fact expiry and the block's stale-turn marks need the entities, so filtering
 * in place could not be exact. Otherwise the cached context is returned unchanged.
 */
export function refreshForRead(ctx: SessionContext, now: number): SessionContext | null {
  return ctx.expiresAt !== null && now >= ctx.expiresAt ? null : ctx;
}

function toContextFact(e: TemporalEntity): ContextFact {
  return { key: e.key, field: e.field, value: e.value, source: e.source, validFrom: e.validFrom, recordedAt: e.recordedAt };
}

/** Hot (kept) turns merged with buffered ones, deduplicated by turnId, last `n` in seq order, with their outdated marks. */
function recentTurns(kept: readonly Turn[], buffered: readonly Turn[], n: number, state: FactState): RecentTurn[] {
  const byId = new Map<string, Turn>();
  for (const t of [...kept, ...buffered]) byId.set(t.turnId, t);
  const ordered = [...byId.values()].sort((a, b) => a.seq - b.seq);
  return ordered.slice(Math.max(0, ordered.length - Math.max(0, n))).map((t) => {
    const r: RecentTurn = { turnId: t.turnId, role: t.role, text: t.text, ts: t.ts };
    if (t.speaker !== undefined) r.speaker = t.speaker;
    if (t.interrupted) r.interrupted = true;
    const marks = outdatedMarks(state, t.text, [t.turnId], t.ts);
    if (marks.length > 0) r.outdated = marks;
    return r;
  });
}

interface BlockParts {
  facts: ContextFact[];
  possibly: ContextFact[];
  recent: RecentTurn[];
  /** As stored; each sentence gets its own outdated marks, so a mark sits on the value that changed. */
  summaries: readonly SessionSummary[];
  now: number;
  state: FactState;
}

type SectionId = 'profile' | 'facts' | 'possibly' | 'summaries' | 'recent';

interface Section {
  title: string;
  lines: string[];
  /** Lines available before caps and trimming; fact sections say how many were left out. */
  total: number;
  /** Trimming drops from the start (oldest turns, oldest summaries) instead of the end. */
  trimFromStart: boolean;
  countsHidden: boolean;
}

/**
 * Over budget, sections shrink in this order down to each floor: verbatim talk first,
 * then inferred facts, then profile, and confirmed facts last. All of it stays in the
 * structured payload; only the prompt text is trimmed.
 */
const TRIM_ORDER: ReadonlyArray<readonly [SectionId, number]> = [
  ['recent', 4],
  ['summaries', 1],
  ['possibly', 3],
  ['profile', 5],
  ['facts', 5],
  ['recent', 2],
  ['summaries', 0],
  // Past every floor the budget still wins: an oversized block would be cut by the caller anyway, blindly.
  ['possibly', 0],
  ['recent', 0],
  ['profile', 0],
  ['facts', 0],
];

function renderBlock(doc: HotDocument | null, p: BlockParts): string {
  const profileEntries = Object.entries(doc?.profile ?? {});
  const factLine = (f: ContextFact): string => `- ${label(f.key)}: ${clip(formatValue(f.value), MAX_VALUE_CHARS)} (since ${day(f.validFrom)})`;
  const sortedSummaries = [...p.summaries].sort((a, b) => Date.parse(a.from) - Date.parse(b.from));
  const sections: Record<SectionId, Section> = {
    profile: {
      title: 'Profile',
      lines: profileEntries.slice(0, MAX_PROFILE_LINES).map(([key, e]) => `- ${label(key)}: ${clip(formatValue(e.value), MAX_VALUE_CHARS)}${e.source === 'inferred' ? ' (inferred)' : ''}`),
      total: profileEntries.length,
      trimFromStart: false,
      countsHidden: true,
    },
    facts: {
      title: 'Current facts (explicit or confirmed — state them as true)',
      lines: p.facts.slice(0, MAX_FACT_LINES).map(factLine),
      total: p.facts.length,
      trimFromStart: false,
      countsHidden: true,
    },
    possibly: {
      title: 'Possibly (inferred — ask or hedge, do not assert)',
      lines: p.possibly.slice(0, MAX_POSSIBLY_LINES).map(factLine),
      total: p.possibly.length,
      trimFromStart: false,
      countsHidden: true,
    },
    summaries: {
      title: 'Earlier sessions',
      lines: sortedSummaries.slice(-MAX_SUMMARIES).map((s) => `- ${day(s.from)}: ${summaryLine(p.state, s.text)}`),
      total: sortedSummaries.length,
      trimFromStart: true,
      countsHidden: false,
    },
    recent: {
      title: 'Recent conversation',
      lines: p.recent.map((t) => {
        const who = speakerLabel(t);
        // An agent turn cut off by barge-in ends mid-sentence: say so, or it reads as a half-quoted question.
        const text = t.interrupted ? `${clip(t.text, MAX_TURN_CHARS).replace(/[\s,;:—…-]+$/, '')}… (interrupted)` : clip(t.text, MAX_TURN_CHARS);
        return `- [${day(iso(t.ts))}] ${who}: ${markSentences(p.state, text, t.outdated ?? [])}`;
      }),
      total: p.recent.length,
      trimFromStart: true,
      countsHidden: false,
    },
  };
  const order: SectionId[] = ['profile', 'facts', 'possibly', 'summaries', 'recent'];

  const render = (): string => {
    const out = [`# Memory of this user (as of ${day(iso(p.now))})`];
    for (const id of order) {
      const s = sections[id];
      if (s.lines.length === 0) continue;
      out.push(`## ${s.title}`, ...s.lines);
      const hidden = s.total - s.lines.length;
      if (s.countsHidden && hidden > 0) out.push(`- … ${hidden} more not shown`);
    }
    if (out.length === 1) out.push('Nothing remembered yet: treat this as a first conversation.');
    return out.join('\n');
  };

  let block = render();
  for (const [id, floor] of TRIM_ORDER) {
    const s = sections[id];
    while (estimateTokens(block) > CONTEXT_BLOCK_TOKEN_BUDGET && s.lines.length > floor) {
      if (s.trimFromStart) s.lines.shift();
      else s.lines.pop();
      block = render();
    }
  }
  return block;
}

const label = keyLabel;

function day(isoTime: string): string {
  const ms = Date.parse(isoTime);
  return Number.isNaN(ms) ? isoTime.slice(0, 10) : iso(ms).slice(0, 10);
}

/** A stored summary as whole sentences that fit the line, each stale value marked where it is stated. */
function summaryLine(state: FactState, text: string): string {
  return fitSentences(annotateSentences(state, summarySentences(text)), MAX_SUMMARY_CHARS);
}

function annotateSentences(state: FactState, sentences: readonly string[]): string[] {
  return sentences.map((s) => annotate(state, s, outdatedMarks(state, s, [])));
}

/**
 * A turn's text with its marks where the stale value is said: after the sentence that states it
 * ("My budget is 50 lakhs. [outdated: budget is now ₹80 lakh] I want a 2 BHK."), so a sentence
 * that still holds is not read as history. A mark no sentence states (the turn is only the stale
 * record's evidence) goes at the end, as before.
 */
function markSentences(state: FactState, text: string, marks: readonly OutdatedMark[]): string {
  const sentences = splitSentences(text);
  if (marks.length === 0 || sentences.length < 2) return annotate(state, text, marks);
  const placed = new Set<string>();
  const out = sentences.map((s) => {
    const here = outdatedMarks(state, s, []).filter((m) => !placed.has(m.key) && marks.some((x) => x.key === m.key));
    for (const m of here) placed.add(m.key);
    return annotate(state, s, here);
  });
  return annotate(
    state,
    out.join(' '),
    marks.filter((m) => !placed.has(m.key)),
  );
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}
