import type { Candidate } from './value-finders.ts';

/** One value of a keyed field and the part of its clause that names its qualifier. */
export interface KeyedValue {
  c: Candidate;
  scope: string;
}

// Where one item of a spoken list ends and the next begins ("30,000 for MG Road | and 45,000 ...").
const ITEM_BREAK = /,\s+(?:and\s+|while\s+|but\s+)?|;\s+|\s+(?:and|while|whereas|but)\s+/gi;

/**
 * Several values of one keyed field in a clause, each paired with the qualifier named in its own
 * part of the clause: "30,000 for the MG Road flat and 45,000 for the Indiranagar flat" → 30,000
 * with "the MG Road flat", 45,000 with "the Indiranagar flat". The clause is cut at the first list
 * break ("and", a comma, "while"...) between consecutive values. Null unless there are at least two
 * values and every part names a qualifier of its own, all different ("between 30,000 and 45,000
 * for MG Road" is one range, not two entities).
 */
export function keyedValues(text: string, cands: readonly Candidate[], qualifierOf: (part: string) => string | null): KeyedValue[] | null {
  const sorted = [...cands].sort((a, b) => a.start - b.start);
  if (sorted.length < 2) return null;
  const cuts = [0];
  for (let i = 1; i < sorted.length; i++) {
    const from = sorted[i - 1]!.end;
    ITEM_BREAK.lastIndex = 0;
    const gap = text.slice(from, sorted[i]!.start);
    const m = ITEM_BREAK.exec(gap);
    if (!m) return null;
    cuts.push(from + m.index);
  }
  cuts.push(text.length);
  const out: KeyedValue[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < sorted.length; i++) {
    const scope = text.slice(cuts[i], cuts[i + 1]).replace(/^[\s,;]+/, '');
    const q = qualifierOf(scope);
    const key = q
      ?.toLowerCase()
      .replace(/^the\s+/, '')
      .replace(/[^a-z0-9]+/g, '');
    if (!q || !key || seen.has(key)) return null;
    seen.add(key);
    out.push({ c: sorted[i]!, scope });
  }
  return out;
}
