import { describe, expect, it } from 'vitest';
import { LiveState } from '../../src/gateway/live-state.ts';
import type { MemgateEvent } from '../../src/ports/event-bus.ts';

let now = 1_000_000_000_000;
const ev = (type: MemgateEvent['type'], data: Record<string, unknown> = {}, over: Partial<MemgateEvent> = {}): MemgateEvent => ({
  type,
  tenantId: 'T',
  agentId: 'a',
  userId: 'u',
  sessionId: 's1',
  at: now,
  data,
  ...over,
});

describe('LiveState (dashboard reads kept from events)', () => {
  it('tracks calls, turns per second and ack quantiles per tenant', () => {
    const live = new LiveState(3, () => now);
    live.onEvent(ev('session.started'));
    for (let i = 1; i <= 100; i++) live.onEvent(ev('turn.appended', { turnId: `t${i}`, seq: i, ackMs: i / 10 }));
    live.onEvent(ev('turn.duplicate', { turnId: 't5', seq: 5 }));
    live.onEvent(ev('session.started', {}, { tenantId: 'U', sessionId: 'other' }));
    const calls = live.calls('T') as any;
    expect(calls.calls).toEqual([expect.objectContaining({ sessionId: 's1', turns: 100, duplicates: 1, lastSeq: 100, lastAckMs: 10 })]);
    expect(calls.lastMinute).toEqual({ turns: 100, ackP50Ms: 5, ackP99Ms: 9.9 });
    expect(calls.series.turnsPerSec.at(-1)).toBe(100);
    expect((live.calls('U') as any).calls.map((c: any) => c.sessionId)).toEqual(['other']);
    expect((live.calls('nobody') as any).calls).toEqual([]);
    now += 61_000;
    expect((live.calls('T') as any).lastMinute.turns).toBe(0);
    live.onEvent(ev('session.ended'));
    expect((live.calls('T') as any).calls).toEqual([]);
    expect((live.calls('T') as any).ended[0]).toMatchObject({ sessionId: 's1', endedAt: now });
  });

  it('shows how a call ended (end, dropped, idle) and continues a reopened call instead of counting it anew', () => {
    const live = new LiveState(3, () => now);
    live.onEvent(ev('session.started', {}, { sessionId: 'kept' }));
    live.onEvent(ev('turn.appended', { seq: 1, ackMs: 1 }, { sessionId: 'kept' }));
    // Its socket dropped: ended by the gateway after the grace, with the reason.
    live.onEvent(ev('session.ended', { reason: 'dropped', lastSeq: 1 }, { sessionId: 'kept' }));
    let calls = live.calls('T') as any;
    expect(calls.calls).toEqual([]);
    expect(calls.ended[0]).toMatchObject({ sessionId: 'kept', endReason: 'dropped', turns: 1 });
    // The caller reconnects: the same call is live again with its turns.
    live.onEvent(ev('session.started', { reopened: true }, { sessionId: 'kept' }));
    live.onEvent(ev('turn.appended', { seq: 2, ackMs: 1 }, { sessionId: 'kept' }));
    calls = live.calls('T') as any;
    expect(calls.calls).toEqual([expect.objectContaining({ sessionId: 'kept', turns: 2, reopens: 1, endedAt: null, endReason: null })]);
    expect(calls.ended).toEqual([]);
    live.onEvent(ev('session.ended', { reason: 'end' }, { sessionId: 'kept' }));
    expect((live.calls('T') as any).ended[0]).toMatchObject({ sessionId: 'kept', endReason: 'end' });
    // An HTTP call nobody ended: after 30 minutes without an event it is shown ended, as idle.
    live.onEvent(ev('session.started', {}, { sessionId: 'forgotten' }));
    now += 31 * 60_000;
    calls = live.calls('T') as any;
    expect(calls.calls).toEqual([]);
    expect(calls.ended[0]).toMatchObject({ sessionId: 'forgotten', endReason: 'idle' });
  });

  it('the extraction lane: queued, running, committed, failed, dead-lettered, errors with reasons', () => {
    const live = new LiveState(3, () => now);
    live.onEvent(ev('session.ended', {}, { userId: 'q' }));
    live.onEvent(ev('extraction.started', { turns: 4 }, { userId: 'r' }));
    live.onEvent(ev('extraction.started', { turns: 4 }, { userId: 'c' }));
    live.onEvent(ev('extraction.finished', { ran: true, durationMs: 120 }, { userId: 'c' }));
    live.onEvent(ev('extraction.failed', { code: 'unavailable', attempt: 1, retryable: true, message: 'llm down' }, { userId: 'f' }));
    live.onEvent(ev('extraction.failed', { code: 'unavailable', attempt: 3, retryable: true, message: 'llm down' }, { userId: 'd' }));
    live.onEvent(ev('extraction.failed', { code: 'bad_request', attempt: 1, retryable: false, message: 'bad schema' }, { userId: 'd2' }));
    live.onEvent(ev('turn.quarantined', { turnId: 't9', reason: 'invalid UTF-8' }, { userId: 'z' }));
    const lane = live.extraction('T', 600_000) as any;
    expect(lane.counts).toEqual({ queued: 1, running: 1, committed: 1, failed: 1, deadLettered: 2 });
    expect(lane.windowLatencyMs).toEqual({ p50: 120, p99: 120, max: 120 });
    expect(lane.errors.map((e: any) => [e.userId, e.state, e.code, e.message])).toEqual([
      ['z', 'failed', 'quarantined', 'invalid UTF-8'],
      ['d2', 'dead-lettered', 'bad_request', 'bad schema'],
      ['d', 'dead-lettered', 'unavailable', 'llm down'],
      ['f', 'failed', 'unavailable', 'llm down'],
    ]);
    now += 700_000;
    expect((live.extraction('T', 600_000) as any).counts.committed).toBe(0);
  });
});
