import { hasLeadIn } from '../text/lead-ins.ts';

/**
 * Defects that make a context block read badly aloud: the LLM that speaks from it repeats what
 * it reads. Each finding names the line; an empty list means the block passed. Run over every
 * block the scenario suite and the LoCoMo bench build, and usable at run time (it is cheap).
 */
export interface BlockDefect {
  line: number;
  kind: 'blank_line' | 'empty_entry' | 'doubled_label' | 'dangling_possessive' | 'unmatched_quote' | 'repeated_word' | 'spliced_clause' | 'lead_in';
  text: string;
}

const ROLE = '(?:user|agent|system|tool)';
const DOUBLED_LABEL = new RegExp(`\\(${ROLE}\\)\\s*\\(${ROLE}\\)`, 'i');
// "what is Asha Rao's?": a possessive with nothing owned after it, before punctuation or the end.
const DANGLING_POSSESSIVE = /\p{L}['’]s\s*(?:[?!,;:]|\.(?!\w)|$)/u;
// "- [2026-01-05] user:" or "- budget:" with nothing after the colon.
const EMPTY_ENTRY = /^-\s+(?:\[[^\]]*\]\s+)?[^:]{1,80}:\s*$/;
// "the the", "is is": a doubled word is a splice gone wrong (in memgate's own lines; a turn quoted
// verbatim says what was said, and "ha ha" or "no no" is speech).
const REPEATED_WORD = /\b(\p{L}{2,})\s+\1\b/iu;

// A clause spliced into another: "the kind of home is Rajiv Kumar is looking", "the budget is Rajiv
// Kumar's budget is around": a copula, a name (or its possessive and a noun), and a second copula.
const NAME = '(?:[A-Z]\\p{L}*|the user|the agent)';
const SPLICED_COPULAS = new RegExp(`\\b(?:is|are|was|were)\\s+(?:${NAME}\\s+){0,2}${NAME}(?:['’]s\\s+\\p{L}+)?\\s+(?:is|are|was|were)\\b`, 'u');
// "Rajiv Kumar's name is Rajiv Kumar": a rewrite that states a name of itself.
const NAME_OF_ITSELF = /\b([A-Z]\p{L}+(?: [A-Z]\p{L}+)?)['’]s name is \1\b/u;

export function blockDefects(block: string): BlockDefect[] {
  const out: BlockDefect[] = [];
  let verbatim = false;
  block.split('\n').forEach((text, i) => {
    const line = i + 1;
    if (text.trim() === '') return void out.push({ line, kind: 'blank_line', text });
    if (text.startsWith('#')) return void (verbatim = text === '## Recent conversation');
    if (EMPTY_ENTRY.test(text)) out.push({ line, kind: 'empty_entry', text });
    if (DOUBLED_LABEL.test(text)) out.push({ line, kind: 'doubled_label', text });
    if (DANGLING_POSSESSIVE.test(text)) out.push({ line, kind: 'dangling_possessive', text });
    if ((text.match(/"/g)?.length ?? 0) % 2 === 1) out.push({ line, kind: 'unmatched_quote', text });
    if (!verbatim && REPEATED_WORD.test(text)) out.push({ line, kind: 'repeated_word', text });
    if (SPLICED_COPULAS.test(text) || NAME_OF_ITSELF.test(text)) out.push({ line, kind: 'spliced_clause', text });
    // "Good news though, ...", "said Noted: ...": speech quoted into memgate's own lines (a turn quoted verbatim may open so).
    if (!verbatim && hasLeadIn(text)) out.push({ line, kind: 'lead_in', text });
  });
  return out;
}
