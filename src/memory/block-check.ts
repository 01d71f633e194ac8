/**
 * Defects that make a context block read badly aloud: the LLM that speaks from it repeats what
 * it reads. Each finding names the line; an empty list means the block passed. Run over every
 * block the scenario suite and the LoCoMo bench build, and usable at run time (it is cheap).
 */
export interface BlockDefect {
  line: number;
  kind: 'blank_line' | 'empty_entry' | 'doubled_label' | 'dangling_possessive' | 'unmatched_quote' | 'repeated_word';
  text: string;
}

const ROLE = '(?:user|agent|system|tool)';
const DOUBLED_LABEL = new RegExp(`\\(${ROLE}\\)\\s*\\(${ROLE}\\)`, 'i');
// "what is Asha Rao's?": a possessive with nothing owned after it, before punctuation or the end.
const DANGLING_POSSESSIVE = /\p{L}['’]s\s*(?:[?!,;:]|\.(?!\w)|$)/u;
// "- [2026-01-05] user:" or "- budget:" with nothing after the colon.
const EMPTY_ENTRY = /^-\s+(?:\[[^\]]*\]\s+)?[^:]{1,80}:\s*$/;
// "the the", "is is": a doubled word is a splice gone wrong.
const REPEATED_WORD = /\b(\p{L}{2,})\s+\1\b/iu;

export function blockDefects(block: string): BlockDefect[] {
  const out: BlockDefect[] = [];
  block.split('\n').forEach((text, i) => {
    const line = i + 1;
    if (text.trim() === '') return void out.push({ line, kind: 'blank_line', text });
    if (text.startsWith('#')) return;
    if (EMPTY_ENTRY.test(text)) out.push({ line, kind: 'empty_entry', text });
    if (DOUBLED_LABEL.test(text)) out.push({ line, kind: 'doubled_label', text });
    if (DANGLING_POSSESSIVE.test(text)) out.push({ line, kind: 'dangling_possessive', text });
    if ((text.match(/"/g)?.length ?? 0) % 2 === 1) out.push({ line, kind: 'unmatched_quote', text });
    if (REPEATED_WORD.test(text)) out.push({ line, kind: 'repeated_word', text });
  });
  return out;
}
