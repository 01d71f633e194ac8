import { describe, expect, it } from 'vitest';
import { calendarDates } from '../../src/text/calendar-dates.ts';
import { datePhrases } from '../../src/adapters/sqlite/fts-query.ts';

describe('calendarDates', () => {
  it('reads every written form to the same parts and blanks them out', () => {
    for (const text of ['on 2023-07-06', 'on July 6, 2023', 'on 6 July 2023', 'on the 6th of July 2023']) {
      const { dates, rest } = calendarDates(text);
      expect(dates).toEqual([{ year: '2023', month: 7, day: 6 }]);
      expect(rest).not.toMatch(/\d/);
    }
    expect(calendarDates('July 2023').dates).toEqual([{ year: '2023', month: 7 }]);
    expect(calendarDates('June 26').dates).toEqual([{ month: 6, day: 26 }]);
  });

  it('takes a bare month only when asked, and "may"/"march" only where they are no verb', () => {
    expect(calendarDates('back in July').dates).toEqual([]);
    expect(calendarDates('back in July', true).dates).toEqual([{ month: 7 }]);
    expect(calendarDates('we may march on', true).dates).toEqual([]);
    expect(calendarDates('since May', true).dates).toEqual([{ month: 5 }]);
  });

  it('leaves impossible dates alone', () => {
    expect(calendarDates('July 45, 2023').dates).toEqual([]);
  });

  it("turns a question's dates into the phrases FTS5 sees in stored ISO dates", () => {
    expect(datePhrases('What happened on October 13, 2023 and in July 2023?')).toEqual(['"2023 10 13"', '"2023 07"']);
  });
});
