import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ExtractionSchema } from '../../src/core/extraction-schema.ts';
import type { Turn } from '../../src/core/types.ts';
import type { Extractor } from '../../src/ports/extractor.ts';
import { makeTurn } from '../support/fixtures.ts';
import { REPO_ROOT } from '../support/processes.ts';

/** The shipped real-estate schema: the contract speaks of budgets and names, as callers do. */
export const CONTRACT_SCHEMA = JSON.parse(readFileSync(join(REPO_ROOT, 'config/schemas/real-estate.json'), 'utf8')) as ExtractionSchema;

const T0 = Date.parse('2026-03-01T10:00:00Z');
const NOW = Date.parse('2026-03-02T00:00:00Z');

/** A short call: the caller's name and budget, the agent's own office number, a misheard budget. */
export function contractCall(prefix: string): Turn[] {
  const said: Array<Partial<Turn>> = [
    { role: 'agent', speaker: 'Meera', text: 'Hello, this is Meera from Skyline Homes. Our office number is 080 4455 6677.' },
    { role: 'user', speaker: 'Rajiv Kumar', text: 'Hi Meera, my name is Rajiv Kumar and my budget is 80 lakhs.' },
    { role: 'agent', speaker: 'Meera', text: 'Great, a budget of 80 lakhs. Which area do you prefer?' },
    { role: 'user', speaker: 'Rajiv Kumar', text: 'Something near Whitefield would be ideal.' },
    { role: 'user', speaker: 'Rajiv Kumar', text: 'My budget might go to 95 lakhs.', asrConfidence: 0.3 },
  ];
  return said.map((t, i) => makeTurn(i + 1, { turnId: `t-${prefix}-${i + 1}`, ts: T0 + i * 5_000, ...t }));
}

const SOURCES = new Set(['explicit', 'confirmed', 'inferred']);

/**
 * The Extractor contract, run over every adapter (the offline rules; any OpenAI-compatible model,
 * here the real `openai` client against the local fake): what the pipeline may rely on whatever
 * produced the facts. Facts name schema fields and cite turns of the window; nothing rests on the
 * agent's word alone; a misheard span yields at most `inferred`; drafts cite the window's turns.
 */
export function extractorContract(name: string, make: () => Extractor): void {
  describe(`Extractor contract: ${name}`, () => {
    const x = make();
    const extract = (turns: Turn[]) => x.extract({ schema: CONTRACT_SCHEMA, turns, knownProfile: {}, now: NOW });

    it('has an id, and finds nothing in no turns', async () => {
      expect(x.id).toMatch(/\S/);
      expect(await extract([])).toEqual([]);
      expect(await x.compress({ turns: [], now: NOW })).toEqual([]);
    });

    it("extracts the caller's budget, citing the turn that said it", async () => {
      const turns = contractCall('b');
      const facts = await extract(turns);
      const budget = facts.find((f) => f.field === 'budget' && f.source !== 'inferred');
      expect(budget?.value).toMatchObject({ amount: 8_000_000 });
      expect(budget?.evidence).toContain('t-b-2');
    });

    it('names only schema fields, cites only turns of the window (at least one), with a known source', async () => {
      const turns = contractCall('s');
      const ids = new Set(turns.map((t) => t.turnId));
      const fields = new Set(CONTRACT_SCHEMA.fields.map((f) => f.name));
      const facts = await extract(turns);
      expect(facts.length).toBeGreaterThan(0);
      for (const f of facts) {
        expect(fields.has(f.field)).toBe(true);
        expect(f.evidence.length).toBeGreaterThan(0);
        for (const id of f.evidence) expect(ids.has(id)).toBe(true);
        expect(SOURCES.has(f.source)).toBe(true);
      }
    });

    it("never rests a fact on the agent's word alone, and a misheard span is at most inferred", async () => {
      const turns = contractCall('a');
      const byId = new Map(turns.map((t) => [t.turnId, t]));
      for (const f of await extract(turns)) {
        const cited = f.evidence.map((id) => byId.get(id)!);
        expect(cited.some((t) => t.role === 'user')).toBe(true);
        const users = cited.filter((t) => t.role === 'user');
        if (users.every((t) => (t.asrConfidence ?? 1) < 0.6)) expect(f.source).toBe('inferred');
      }
    });

    it('drafts self-contained units that cite turns of the segment', async () => {
      const turns = contractCall('c');
      const ids = new Set(turns.map((t) => t.turnId));
      const drafts = await x.compress({ turns, userName: 'Rajiv Kumar', agentName: 'Meera', now: NOW });
      expect(drafts.length).toBeGreaterThan(0);
      for (const d of drafts) {
        expect(d.text.trim()).not.toBe('');
        expect(d.turnRefs.length).toBeGreaterThan(0);
        for (const id of d.turnRefs) expect(ids.has(id)).toBe(true);
      }
      expect(drafts.some((d) => /80 lakh/i.test(d.text) && d.turnRefs.includes('t-c-2'))).toBe(true);
    });
  });
}
