import { iso } from '../core/clock.ts';
import { estimateTokens } from '../core/tokens.ts';
import type { ContextFact, FactValue, HotDocument, SessionContext, SessionSummary, TemporalEntity, Turn } from '../core/types.ts';
import { memorySearchTool } from './search-tool.ts';
import { activeEntities, isExpired } from './supersession.ts';
import { formatValue } from './values.ts';

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
 * Session start payload (DESIGN.md §1, §4) from one hot document plus the buffered
 * turns: current profile, active unexpired facts split by source (explicit/confirmed
 * vs inferred), the last `contextWindowTurns` turns, summaries, the memory_search
 * tool, and a stratified plain-text `contextBlock`. Superseded and expired facts never
 * appear; a recent turn that only evidences outdated facts is marked in the block.
 */
export function buildSessionContext(doc: HotDocument | null, opts: BuildContextOptions): SessionContext {
  const { now } = opts;
  const visible = doc ? activeEntities(doc.entities, now).filter((e) => e.category !== 'profile') : [];
  visible.sort((a, b) => Date.parse(b.validFrom) - Date.parse(a.validFrom) || a.key.localeCompare(b.key, 'en', { numeric: true }));
  const facts = visible.filter((e) => e.source !== 'inferred').map(toContextFact);
  const possibly = visible.filter((e) => e.source === 'inferred').map(toContextFact);
  const expiries = visible.flatMap((e) => (e.expiresAt === null ? [] : [Date.parse(e.expiresAt)]));
  const profile: Record<string, FactValue> = {};
  for (const [k, entry] of Object.entries(doc?.profile ?? {})) profile[k] = entry.value;
  const recent = recentTurns(doc?.recent ?? [], opts.bufferedTurns ?? [], opts.contextWindowTurns);
  const summaries = doc ? [...doc.summaries] : [];

  return {
    profile,
    facts,
    possibly,
    recent,
    summaries,
    contextBlock: renderBlock(doc, { facts, possibly, recent, summaries, now }),
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

/** Hot (kept) turns merged with buffered ones, deduplicated by turnId, last `n` in seq order. */
function recentTurns(kept: readonly Turn[], buffered: readonly Turn[], n: number): RecentTurn[] {
  const byId = new Map<string, Turn>();
  for (const t of [...kept, ...buffered]) byId.set(t.turnId, t);
  const ordered = [...byId.values()].sort((a, b) => a.seq - b.seq);
  return ordered.slice(Math.max(0, ordered.length - Math.max(0, n))).map((t) => {
    const r: RecentTurn = { turnId: t.turnId, role: t.role, text: t.text, ts: t.ts };
    if (t.speaker !== undefined) r.speaker = t.speaker;
    return r;
  });
}

interface BlockParts {
  facts: ContextFact[];
  possibly: ContextFact[];
  recent: RecentTurn[];
  summaries: SessionSummary[];
  now: number;
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
];

function renderBlock(doc: HotDocument | null, p: BlockParts): string {
  const profileEntries = Object.entries(doc?.profile ?? {});
  const factLine = (f: ContextFact): string => `- ${label(f.key)}: ${clip(formatValue(f.value), MAX_VALUE_CHARS)} (since ${day(f.validFrom)})`;
  const notes = doc ? staleNotes(doc, p.now) : new Map<string, string[]>();
  const sortedSummaries = [...p.summaries].sort((a, b) => Date.parse(a.from) - Date.parse(b.from));
  const sections: Record<SectionId, Section> = {
    profile: {
      title: 'Profile',
      lines: profileEntries.slice(0, MAX_PROFILE_LINES).map(([key, e]) => `- ${label(key)}: ${clip(formatValue(e.value), MAX_VALUE_CHARS)}${e.source === 'inferred' ? ' (inferred)' : ''}`),
      total: profileEntries.length,
      trimFromStart: false,
      countsHidden: true,
    },
    facts: { title: 'Current facts (confirmed — state them as true)', lines: p.facts.slice(0, MAX_FACT_LINES).map(factLine), total: p.facts.length, trimFromStart: false, countsHidden: true },
    possibly: { title: 'Possibly (inferred — ask or hedge, do not assert)', lines: p.possibly.slice(0, MAX_POSSIBLY_LINES).map(factLine), total: p.possibly.length, trimFromStart: false, countsHidden: true },
    summaries: {
      title: 'Earlier sessions',
      lines: sortedSummaries.slice(-MAX_SUMMARIES).map((s) => `- ${day(s.from)}: ${clip(s.text, MAX_SUMMARY_CHARS)}`),
      total: sortedSummaries.length,
      trimFromStart: true,
      countsHidden: false,
    },
    recent: {
      title: 'Recent conversation',
      lines: p.recent.map((t) => {
        const who = t.speaker ? `${t.speaker} (${t.role})` : t.role;
        const mark = notes.get(t.turnId);
        return `- [${day(iso(t.ts))}] ${who}: ${clip(t.text, MAX_TURN_CHARS)}${mark ? ` [outdated: ${mark.join('; ')}]` : ''}`;
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

/**
 * Turn id → notes for turns that evidence only superseded or expired records (none
 * active), e.g. "budget is now ₹80 lakh", so the model does not revive an old value.
 */
function staleNotes(doc: HotDocument, now: number): Map<string, string[]> {
  const live = activeEntities(doc.entities, now);
  const liveEvidence = new Set(live.flatMap((e) => e.evidence));
  for (const entry of Object.values(doc.profile)) for (const id of entry.evidence) liveEvidence.add(id);
  const notes = new Map<string, string[]>();
  for (const e of doc.entities) {
    const stale = e.status === 'superseded' || isExpired(e, now);
    if (!stale) continue;
    const note = staleNote(e, doc, live, now);
    for (const id of e.evidence) {
      if (liveEvidence.has(id)) continue;
      const list = notes.get(id) ?? [];
      if (!list.includes(note)) list.push(note);
      notes.set(id, list);
    }
  }
  return notes;
}

function staleNote(e: TemporalEntity, doc: HotDocument, live: readonly TemporalEntity[], now: number): string {
  const name = label(e.key);
  if (e.status === 'active' && isExpired(e, now)) return `${name} has expired`;
  const current = live.find((x) => x.key === e.key);
  const value = current?.value ?? (e.category === 'profile' ? doc.profile[e.key]?.value : undefined);
  return value === undefined ? `${name} no longer current` : `${name} is now ${clip(formatValue(value), MAX_VALUE_CHARS)}`;
}

/** `budget` → "budget", `property_status:12 mg road` → "property status (12 mg road)". */
function label(key: string): string {
  const i = key.indexOf(':');
  const field = (i < 0 ? key : key.slice(0, i)).replace(/_/g, ' ');
  return i < 0 ? field : `${field} (${key.slice(i + 1)})`;
}

function day(isoTime: string): string {
  const ms = Date.parse(isoTime);
  return Number.isNaN(ms) ? isoTime.slice(0, 10) : iso(ms).slice(0, 10);
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}
