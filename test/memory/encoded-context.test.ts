import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { encodeContextReply } from '../../src/gateway/codec.ts';
import { contextFields, decodeContext, encodeContext, fromStored, toStored } from '../../src/memory/encoded-context.ts';
import { makeSessionContext } from '../support/fixtures.ts';

const ctx = makeSessionContext({ contextBlock: 'Budget: ₹80 lakh — "quoted" \\ and \u2028 too', expiresAt: 1_772_445_600_000 });

describe('encoded session context', () => {
  it('round-trips a context through its encoding', () => {
    expect(decodeContext(encodeContext(ctx))).toEqual(ctx);
  });

  it('splices the cached fields into a JSON reply equal to serialising the whole object', () => {
    const enc = encodeContext(ctx);
    const { profile, facts, possibly, recent, summaries, contextBlock, tools } = ctx;
    const fields = { profile, facts, possibly, recent, summaries, contextBlock, tools };
    for (const id of ['r"1', 7, null] as const) {
      const frame = encodeContextReply(id, 's_"x"', enc, 1.25, false);
      expect(Buffer.from(frame).toString('utf8')).toBe(JSON.stringify({ op: 'context', id, sessionId: 's_"x"', ...fields, tookMs: 1.25 }));
    }
    const http = encodeContextReply(undefined, 's_1', enc, 0.5, false);
    expect(JSON.parse(Buffer.from(http).toString('utf8'))).toEqual({ sessionId: 's_1', ...fields, tookMs: 0.5 });
  });

  it('answers MessagePack requests with the fields as values', () => {
    const frame = encodeContextReply('a', 's_1', encodeContext(ctx), 2, true) as Uint8Array;
    const reply = new Packr({ useRecords: false }).unpack(frame) as Record<string, unknown>;
    expect(reply).toMatchObject({ op: 'context', id: 'a', sessionId: 's_1', tookMs: 2, ...contextFields(encodeContext(ctx)) });
  });

  it('reads an entry of another layout (an older release, garbage) as a miss, so it is rebuilt', () => {
    expect(fromStored(ctx)).toBeNull();
    expect(fromStored('x')).toBeNull();
    expect(fromStored(null)).toBeNull();
    const packr = new Packr({ useRecords: false });
    const back = fromStored(packr.unpack(packr.pack(toStored(encodeContext(ctx)))));
    expect(back && decodeContext(back)).toEqual(ctx);
  });
});
