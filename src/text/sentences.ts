/** Sentence-level text helpers for summaries and the context block: lines read aloud must be whole sentences. */

/** The sentences of a text, each without its trailing ", as of 2026-01-05" and ending in a full stop. */
export function summarySentences(text: string): string[] {
  return splitSentences(text)
    .map((s) => s.replace(/,?\s+as of \d{4}-\d{2}-\d{2}(?=[.!?]?$)/, '').trim())
    .map((s) => (/[.!?…]$/.test(s) ? s : `${s}.`))
    .filter((s) => s.length > 1);
}

/** Sentences split after . ! ? (outside quotes) followed by a capital, a digit or a quote. */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === '.' || c === '!' || c === '?') && /^\s+["\p{Lu}\p{N}]/u.test(text.slice(i + 1, i + 3))) {
      out.push(text.slice(start, i + 1).trim());
      start = i + 1;
    }
  }
  const rest = text.slice(start).trim();
  if (rest) out.push(rest);
  return out;
}

/** Whole sentences, in order, as long as they fit in `max` characters (at least the first, clipped if alone too long). */
export function fitSentences(sentences: readonly string[], max: number): string {
  let out = '';
  for (const s of sentences) {
    const next = out ? `${out} ${s}` : s;
    if (next.length > max) break;
    out = next;
  }
  if (out === '' && sentences[0]) out = clipWords(sentences[0], max);
  return out;
}

/** Clip at a word boundary, ending in "…" (quotes closed so the line still reads). */
export function clipWords(s: string, max: number): string {
  const cut = s.slice(0, max - 1).replace(/\s+\S*$/, '');
  const closed = (cut.match(/"/g)?.length ?? 0) % 2 === 1 ? `${cut}"` : cut;
  return `${closed}…`;
}
