import { describe, expect, it } from 'vitest';
import { blockDefects } from '../../src/memory/block-check.ts';

/** The block checker over lines a careless build has produced (issue 20), each alone under a heading. */
const kinds = (line: string) => blockDefects(`# Memory of this user (as of 2026-12-04)\n## Earlier sessions\n${line}`).map((d) => d.kind);

describe('blockDefects', () => {
  it('passes a block that reads cleanly', () => {
    const block = [
      '# Memory of this user (as of 2026-01-17)',
      '## Profile',
      '- full name: Rajiv Kumar',
      '## Earlier sessions',
      "- 2026-01-05: Asha (agent) is from Prestige Homes. The user's name is Rajiv Kumar. Rajiv Kumar (user) is looking for a 3 BHK flat.",
      '## Recent conversation',
      '- [2026-01-17] Rajiv Kumar (user): Great, send me the Whitefield ones first. "Monday" works.',
    ].join('\n');
    expect(blockDefects(block)).toEqual([]);
  });

  it.each([
    ['- [2026-12-04] Meera (agent) (agent): Hello Asha', 'doubled_label'],
    ['- 2026-12-04: Which area are Asha Rao considering, and what is Asha Rao’s?', 'dangling_possessive'],
    ['- [2026-12-04] user: ', 'empty_entry'],
    ['- 2026-12-04: Rajiv Kumar (user) answered "the budget is 50 lakhs', 'unmatched_quote'],
    ['- 2026-12-04: Rajiv Kumar (user) wants the the flat.', 'repeated_word'],
    ["- 2026-01-05: Rajiv Kumar (user) said the budget is Rajiv Kumar's budget is around 50 lakhs.", 'spliced_clause'],
    ['- 2026-01-05: Rajiv Kumar (user) said the kind of home is Rajiv Kumar is looking for a 3 BHK flat.', 'spliced_clause'],
    ['- 2026-01-05: Asha (agent) asked "Who is Asha speaking with?" and Rajiv Kumar (user) answered "Hi Asha, Rajiv Kumar\'s name is Rajiv Kumar".', 'spliced_clause'],
    ["- 2026-01-15: Good news though, the bank approved Rajiv Kumar's loan.", 'lead_in'],
    ['- 2026-01-15: Rajiv Kumar (user) got a loan. Well, the flat is small.', 'lead_in'],
    ['- 2026-11-24: Meera (agent) said Noted: 50 lakhs near Whitefield.', 'lead_in'],
    ["- 2026-11-24: Meera (agent) said Wonderful, with 80 lakhs Meera's team can look at bigger flats too.", 'lead_in'],
  ])('flags %s as %s', (line, kind) => {
    expect(kinds(line)).toEqual([kind]);
  });

  it('takes a doubled word in a verbatim turn as speech ("ha ha"), not a splice', () => {
    const block = ['# Memory of this user (as of 2023-07-23)', '## Recent conversation', '- [2023-07-23] Jon (user): Ah ha ha, yeah, JUST DOING IT!'].join('\n');
    expect(blockDefects(block)).toEqual([]);
    expect(kinds('- 2023-07-23: Jon (user) said ha ha.')).toEqual(['repeated_word']);
  });

  it('passes hedges, corrections and a reported list as no lead-in; a verbatim turn may open with one', () => {
    expect(kinds('- 2026-01-15: Maybe, Rajiv Kumar (user) is thinking about Sarjapur too.')).toEqual([]);
    expect(kinds('- 2026-01-15: Rajiv Kumar (user) said actually, the budget is 80 lakhs.')).toEqual([]);
    expect(kinds('- 2026-01-15: Asha (agent) said Whitefield, Sarjapur and Baner have options.')).toEqual([]);
    expect(kinds('- 2026-01-15: Asha (agent) noted 50 lakhs near Whitefield.')).toEqual([]);
    const block = ['# Memory of this user (as of 2026-01-15)', '## Recent conversation', '- [2026-01-15] Rajiv Kumar (user): Good news though, the bank approved my loan.'].join('\n');
    expect(blockDefects(block)).toEqual([]);
  });

  it('flags a blank line with its number', () => {
    expect(blockDefects('# Memory\n\n## Profile\n- full name: Asha Rao')).toEqual([{ line: 2, kind: 'blank_line', text: '' }]);
  });
});
