import { blockDefects } from '../../src/memory/block-check.ts';
import { http } from '../gateway/support/ws-tester.ts';
import { ScriptedUser, type TestServer } from '../conversations/support.ts';
import { WsScriptedUser } from './ws-user.ts';
import type { Scenario, Shown } from './types.ts';

/** A check's outcome: passed, failed (why), or not part of the scenario. */
export type Check = { ok: true } | { ok: false; why: string } | null;

export interface Outcome {
  scenario: Scenario;
  timeline: Check;
  context: Check;
  search: Check;
  /** Every context block the scenario produced (each call's start and the next call's) through the block checker. */
  block: Check;
  /** Those blocks, in order: the first call's, ..., the next call's. */
  blocks: string[];
}

/** How checks write a value: money as "<amount> <currency>", anything else as its string. */
export function show(value: unknown): Shown {
  if (value !== null && typeof value === 'object' && 'amount' in value && 'currency' in value) {
    const m = value as { amount: number; currency: string };
    return `${m.amount} ${m.currency}`;
  }
  return String(value);
}

const pass: Check = { ok: true };
const fail = (why: string): Check => ({ ok: false, why });
const sorted = (rows: string[][]) => rows.map((r) => r.join(' / ')).sort();

/** How the calls, the next context and search reach memgate (the timeline and flush are HTTP only). */
export type Transport = 'http' | 'ws';

/** Play a scenario's calls through a running memgate (as a voice pipeline would) and check the three reads. */
export async function runScenario(srv: TestServer, s: Scenario, transport: Transport = 'http'): Promise<Outcome> {
  const u = transport === 'ws' ? new WsScriptedUser(srv) : new ScriptedUser(srv);
  if (typeof s.schema === 'string') await u.useSchema(s.schema);
  else {
    const r = await http(srv.base, 'PUT', `/v1/agents/${u.agentId}/schema`, { body: s.schema });
    if (r.status !== 200) throw new Error(`${s.id}: schema refused: ${JSON.stringify(r.body)}`);
  }
  const blocks: string[] = [];
  try {
    for (const [i, call] of s.calls.entries()) {
      const open = s.searchDuringCall === true && i === s.calls.length - 1;
      blocks.push(String((await u.call(call, open ? { end: false } : {}))['contextBlock'] ?? ''));
    }
    const timeline = s.timeline ? await checkTimeline(u, s) : null;
    const context = s.context ? await checkContext(u, s) : null;
    // With an embedder that measures meaning, turn vectors are warmed after each append, on a
    // budget: a search racing that queue would match some turns by meaning and some by words
    // (past its wait), depending on the machine's speed. Waiting for the queue to be idle (not
    // sleeping) makes every search see every turn by meaning, with the default wait.
    if (s.search) await srv.runtime.service.meaningIdle();
    const search = s.search ? await checkSearch(u, s) : null;
    blocks.push(String((await u.nextContext())['contextBlock'] ?? ''));
    return { scenario: s, timeline, context, search, block: checkBlocks(blocks), blocks };
  } finally {
    await u.hangUp();
  }
}

/** The checker's defects over every block, each with the call whose start showed it. */
function checkBlocks(blocks: readonly string[]): Check {
  const found = blocks.flatMap((b, i) => blockDefects(b).map((d) => `call ${i + 1}${i === blocks.length - 1 ? ' (next)' : ''} line ${d.line} ${d.kind}: ${d.text}`));
  return found.length === 0 ? pass : fail(`context block defects: ${found.join(' | ')}`);
}

async function checkTimeline(u: ScriptedUser, s: Scenario): Promise<Check> {
  const tl = await u.timeline();
  for (const [name, want] of Object.entries(s.timeline!)) {
    // "expected_rent:mg road" names one entity; "budget" every entity of the field.
    const mine = tl.filter((e) => (name.includes(':') ? e['key'] : e['field']) === name);
    const withSource = want.some((w) => w.length === 3);
    const got = mine.map((e) => (withSource ? [show(e['value']), String(e['status']), String(e['source'])] : [show(e['value']), String(e['status'])]));
    const [g, w] = [sorted(got), sorted(want)];
    if (JSON.stringify(g) !== JSON.stringify(w)) return fail(`timeline ${name}: got [${g.join('; ')}], want [${w.join('; ')}]`);
  }
  return pass;
}

async function checkContext(u: ScriptedUser, s: Scenario): Promise<Check> {
  const ctx = await u.nextContext();
  const c = s.context!;
  const byKey = (list: Array<Record<string, unknown>>) => new Map(list.map((f) => [String(f['key']), show(f['value'])]));
  // Profile fields sit in `profile` (field → value), the rest in `facts`: one lookup by key for both.
  const facts = byKey(ctx['facts'] ?? []);
  for (const [field, v] of Object.entries((ctx['profile'] ?? {}) as Record<string, unknown>)) {
    facts.set(field, show(v !== null && typeof v === 'object' && 'value' in v ? (v as { value: unknown }).value : v));
  }
  const possibly = byKey(ctx['possibly'] ?? []);
  for (const [key, want] of Object.entries(c.facts ?? {})) {
    if (facts.get(key) !== want) return fail(`facts ${key}: got ${facts.get(key) ?? 'nothing'} (all: ${[...facts].map((e) => e.join('=')).join(', ')}), want ${want}`);
  }
  for (const [key, want] of Object.entries(c.possibly ?? {})) {
    if (possibly.get(key) !== want) return fail(`possibly ${key}: got ${possibly.get(key) ?? 'nothing'}, want ${want}`);
  }
  const block = String(ctx['contextBlock'] ?? '');
  for (const key of c.factsLack ?? []) if (facts.has(key)) return fail(`facts still hold ${key} = ${facts.get(key)}`);
  for (const t of c.blockHas ?? []) if (!block.includes(t)) return fail(`context block lacks "${t}"`);
  for (const t of c.blockLacks ?? []) if (block.toLowerCase().includes(t.toLowerCase())) return fail(`context block still says "${t}"`);
  return pass;
}

async function checkSearch(u: ScriptedUser, s: Scenario): Promise<Check> {
  const q = s.search!;
  const results = await u.search(q.query, q.asOf ? { asOf: q.asOf } : {});
  const first = results[0];
  if (!first) return fail(`search "${q.query}": no results`);
  const text = String(first['text']);
  if (!text.toLowerCase().includes(q.firstHas.toLowerCase())) return fail(`search "${q.query}": first result "${text}" lacks "${q.firstHas}"`);
  if (q.firstLacks && text.includes(q.firstLacks)) return fail(`search "${q.query}": first result "${text}" still says "${q.firstLacks}"`);
  if (!q.asOf && first['outdated']) return fail(`search "${q.query}": first result is marked outdated`);
  if (q.source && first['source'] !== q.source) return fail(`search "${q.query}": first result comes from ${String(first['source'])}, want ${q.source}`);
  if (q.outdated) {
    const { has, now } = q.outdated;
    // A result that states the current value too is the correction itself ("ibuprofen, not aspirin"), not a stale statement.
    const stale = (text: string) => text.includes(has.toLowerCase()) && !(now !== null && text.includes(now.toLowerCase()));
    const old = results.slice(1).find((r) => stale(String(r['text']).toLowerCase()));
    if (!old) return fail(`search "${q.query}": no later result states "${has}"`);
    const mark = old['outdated'] as { now: unknown } | undefined;
    if (!mark) return fail(`search "${q.query}": "${String(old['text'])}" is not marked outdated`);
    const gotNow = mark.now === null ? null : show(mark.now);
    if (gotNow !== now) return fail(`search "${q.query}": "${String(old['text'])}" is outdated with now = ${gotNow}, want ${now}`);
  }
  return pass;
}
