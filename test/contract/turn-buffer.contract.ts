import { describe, expect, it } from 'vitest';
import type { TurnBuffer } from '../../src/ports/turn-buffer.ts';
import { makeTurnInput, randomScope, rid, sibling } from '../support/fixtures.ts';
import { useSubject, type ContractOptions } from '../support/subject.ts';

/**
 * The TurnBuffer contract (docs/design.md §2): durable ordered appends, idempotent
 * turnIds that outlive removal, token accounting, remove-by-id, sessions,
 * forget. Every test uses its own random tenant.
 */
export function turnBufferContract(name: string, make: () => Promise<TurnBuffer>, opts: ContractOptions<TurnBuffer> = {}): void {
  describe(`TurnBuffer contract: ${name}`, () => {
    const buffer = useSubject(make, opts);

    it('appends a turn and returns it with seq 1, not duplicate, and its tokens pending', async () => {
      const scope = randomScope();
      const input = makeTurnInput({ text: 'my budget is fifty lakhs', tokens: 7, sessionId: 's-a' });
      const out = await buffer().append(scope, 's-a', input);
      expect(out.duplicate).toBe(false);
      expect(out.pendingTokens).toBe(7);
      expect(out.turn).toEqual({ ...input, seq: 1 });
    });

    it('lists turns in seq order with strictly increasing seqs', async () => {
      const scope = randomScope();
      const inputs = Array.from({ length: 6 }, (_, i) => makeTurnInput({ text: `turn number ${i}`, role: i % 2 ? 'agent' : 'user' }));
      const seqs: number[] = [];
      for (const input of inputs) seqs.push((await buffer().append(scope, 's-1', input)).turn.seq);
      expect(seqs[0]).toBe(1);
      for (let i = 1; i < seqs.length; i++) expect(seqs[i]!).toBeGreaterThan(seqs[i - 1]!);
      const listed = await buffer().list(scope);
      expect(listed.map((t) => t.turnId)).toEqual(inputs.map((t) => t.turnId));
      expect(listed.map((t) => t.seq)).toEqual(seqs);
      expect(listed.map((t) => t.role)).toEqual(['user', 'agent', 'user', 'agent', 'user', 'agent']);
      // The bounded read a session start makes: the last n, still in seq order; what remains after a removal.
      expect(await buffer().latest(scope, 4)).toEqual(listed.slice(-4));
      expect(await buffer().latest(scope, 100)).toEqual(listed);
      expect(await buffer().latest(scope, 0)).toEqual([]);
      await buffer().remove(scope, [listed[5]!.turnId]);
      expect(await buffer().latest(scope, 2)).toEqual(listed.slice(3, 5));
      expect(await buffer().latest(randomScope(), 3)).toEqual([]);
    });

    it('keeps an independent sequence per user', async () => {
      const a = randomScope();
      const b = sibling(a);
      await buffer().append(a, 's-1', makeTurnInput());
      await buffer().append(a, 's-1', makeTurnInput());
      expect((await buffer().append(b, 's-2', makeTurnInput())).turn.seq).toBe(1);
    });

    it('returns the original turn with duplicate:true for a repeated turnId and stores it once', async () => {
      const scope = randomScope();
      const first = await buffer().append(scope, 's-1', makeTurnInput({ turnId: 'dup-1', text: 'original text', tokens: 4 }));
      await buffer().append(scope, 's-1', makeTurnInput({ tokens: 2 }));
      const again = await buffer().append(scope, 's-1', makeTurnInput({ turnId: 'dup-1', text: 'a retry with other text', tokens: 9 }));
      expect(again.duplicate).toBe(true);
      expect(again.turn).toEqual(first.turn);
      expect(again.pendingTokens).toBe(6);
      expect(await buffer().pendingTokens(scope)).toBe(6);
      expect((await buffer().list(scope)).filter((t) => t.turnId === 'dup-1')).toHaveLength(1);
    });

    it('still recognises a turnId after the turn was removed (archived), with the original seq', async () => {
      const scope = randomScope();
      const first = await buffer().append(scope, 's-1', makeTurnInput({ turnId: 'gone-1', text: 'archived soon', tokens: 5 }));
      await buffer().remove(scope, ['gone-1']);
      const again = await buffer().append(scope, 's-1', makeTurnInput({ turnId: 'gone-1', text: 'late retry', tokens: 5 }));
      expect(again.duplicate).toBe(true);
      expect(again.turn.turnId).toBe('gone-1');
      expect(again.turn.seq).toBe(first.turn.seq);
      expect(again.pendingTokens).toBe(0);
      expect(await buffer().list(scope)).toEqual([]);
      expect(await buffer().pendingTokens(scope)).toBe(0);
    });

    it('scopes turnIds per user: the same turnId for another user is a new turn', async () => {
      const a = randomScope();
      const b = { ...randomScope(), agentId: a.agentId, userId: a.userId };
      await buffer().append(a, 's-1', makeTurnInput({ turnId: 'shared-id' }));
      const other = await buffer().append(b, 's-1', makeTurnInput({ turnId: 'shared-id' }));
      expect(other.duplicate).toBe(false);
      expect(other.turn.seq).toBe(1);
    });

    it('tracks pending tokens across appends and removes, without double counting', async () => {
      const scope = randomScope();
      expect(await buffer().pendingTokens(scope)).toBe(0);
      const t1 = makeTurnInput({ tokens: 10 });
      const t2 = makeTurnInput({ tokens: 20 });
      const t3 = makeTurnInput({ tokens: 30 });
      expect((await buffer().append(scope, 's-1', t1)).pendingTokens).toBe(10);
      expect((await buffer().append(scope, 's-1', t2)).pendingTokens).toBe(30);
      expect((await buffer().append(scope, 's-1', t3)).pendingTokens).toBe(60);
      await buffer().remove(scope, [t2.turnId]);
      expect(await buffer().pendingTokens(scope)).toBe(40);
      await buffer().remove(scope, [t2.turnId, 'never-appended']);
      expect(await buffer().pendingTokens(scope)).toBe(40);
      expect((await buffer().append(scope, 's-1', makeTurnInput({ tokens: 1 }))).pendingTokens).toBe(41);
      await buffer().remove(scope, []);
      expect(await buffer().pendingTokens(scope)).toBe(41);
    });

    it('removes by id only: turns appended after the snapshot stay, in order', async () => {
      const scope = randomScope();
      for (let i = 0; i < 4; i++) await buffer().append(scope, 's-1', makeTurnInput({ tokens: 2 }));
      const snapshot = await buffer().list(scope);
      const later1 = makeTurnInput({ tokens: 3 });
      const later2 = makeTurnInput({ tokens: 3 });
      await buffer().append(scope, 's-1', later1);
      await buffer().append(scope, 's-1', later2);
      const kept = snapshot[3]!;
      await buffer().remove(
        scope,
        snapshot.slice(0, 3).map((t) => t.turnId),
      );
      const listed = await buffer().list(scope);
      expect(listed.map((t) => t.turnId)).toEqual([kept.turnId, later1.turnId, later2.turnId]);
      expect(await buffer().pendingTokens(scope)).toBe(8);
      const next = await buffer().append(scope, 's-1', makeTurnInput());
      expect(next.turn.seq).toBeGreaterThan(listed[2]!.seq);
    });

    it('gives concurrent appends distinct seqs and loses none', async () => {
      const scope = randomScope();
      const inputs = Array.from({ length: 40 }, () => makeTurnInput({ tokens: 1 }));
      const outs = await Promise.all(inputs.map(async (input) => buffer().append(scope, 's-1', input)));
      const seqs = outs.map((o) => o.turn.seq);
      expect(new Set(seqs).size).toBe(40);
      const listed = await buffer().list(scope);
      expect(listed).toHaveLength(40);
      expect(listed.map((t) => t.seq)).toEqual([...seqs].sort((x, y) => x - y));
      expect(await buffer().pendingTokens(scope)).toBe(40);
    });

    it('round-trips optional voice fields faithfully, and leaves absent ones absent', async () => {
      const scope = randomScope();
      const full = makeTurnInput({ speaker: 'Rajiv Kumar', asrConfidence: 0.42, interrupted: true, role: 'agent' });
      const falsy = makeTurnInput({ asrConfidence: 0, interrupted: false });
      const bare = makeTurnInput();
      for (const t of [full, falsy, bare]) await buffer().append(scope, 's-1', t);
      const [a, b, c] = await buffer().list(scope);
      expect(a).toEqual({ ...full, seq: a!.seq });
      expect(b).toEqual({ ...falsy, seq: b!.seq });
      expect(b!.asrConfidence).toBe(0);
      expect(b!.interrupted).toBe(false);
      expect(c).toEqual({ ...bare, seq: c!.seq });
      expect(c!.speaker).toBeUndefined();
      expect(c!.asrConfidence).toBeUndefined();
      expect(c!.interrupted).toBeUndefined();
    });

    it('round-trips unicode text, odd turnIds and exact epoch-ms timestamps', async () => {
      const scope = randomScope({ userId: 'user:with/odd chars ☎' });
      const input = makeTurnInput({
        turnId: 'call:42/turn 7 "q" ☎',
        text: 'नमस्ते 👋 — "quoted" \\ back\nslash \u0000 nul',
        ts: 1_772_359_200_123,
        receivedAt: 1_772_359_200_456,
      });
      await buffer().append(scope, 's-1', input);
      expect(await buffer().list(scope)).toEqual([{ ...input, seq: 1 }]);
      expect((await buffer().append(scope, 's-1', { ...input })).duplicate).toBe(true);
    });

    it('lists nothing and counts zero for an unknown user', async () => {
      const scope = randomScope();
      expect(await buffer().list(scope)).toEqual([]);
      expect(await buffer().pendingTokens(scope)).toBe(0);
      await expect(buffer().remove(scope, ['x'])).resolves.toBeUndefined();
    });

    it('records sessions, finds them by tenant + id, and marks them ended', async () => {
      const scope = randomScope();
      const sessionId = rid('s-');
      expect(await buffer().getSession(scope.tenantId, sessionId)).toBeNull();
      const record = { sessionId, scope, startedAt: 1_772_359_200_000, endedAt: null };
      expect(await buffer().openSession(record)).toEqual({ status: 'opened', session: { ...record, generation: 1 } });
      expect(await buffer().getSession(scope.tenantId, sessionId)).toEqual({ ...record, generation: 1 });
      expect(await buffer().getSession(rid('t-'), sessionId)).toBeNull();
      expect(await buffer().endSession(scope.tenantId, sessionId, 1_772_359_260_000)).toBe(true);
      expect(await buffer().getSession(scope.tenantId, sessionId)).toEqual({ ...record, endedAt: 1_772_359_260_000, generation: 1 });
      expect(await buffer().endSession(scope.tenantId, rid('unknown-'), 1)).toBe(false);
      expect(await buffer().getSession(scope.tenantId, rid('unknown-'))).toBeNull();
    });

    it('a start by the owner is a reconnect: the next generation, an ended session live again, startedAt kept', async () => {
      const scope = randomScope();
      const sessionId = rid('s-');
      const record = { sessionId, scope, startedAt: 100, endedAt: null };
      await buffer().openSession(record);
      // Started again while live (a reconnect within the grace).
      expect(await buffer().openSession({ ...record, startedAt: 200 })).toEqual({ status: 'existing', session: { ...record, generation: 2 } });
      await buffer().endSession(scope.tenantId, sessionId, 300);
      // Started again after the end: reopened.
      expect(await buffer().openSession({ ...record, startedAt: 400 })).toEqual({ status: 'reopened', session: { ...record, generation: 3 } });
      expect(await buffer().getSession(scope.tenantId, sessionId)).toEqual({ ...record, generation: 3 });
    });

    it('a deferred end names a generation: a start since, or an end since, makes it do nothing', async () => {
      const scope = randomScope();
      const sessionId = rid('s-');
      await buffer().openSession({ sessionId, scope, startedAt: 1, endedAt: null });
      await buffer().openSession({ sessionId, scope, startedAt: 2, endedAt: null });
      // The socket of generation 1 dropped; generation 2 reconnected meanwhile.
      expect(await buffer().endSession(scope.tenantId, sessionId, 10, 1)).toBe(false);
      expect((await buffer().getSession(scope.tenantId, sessionId))?.endedAt).toBeNull();
      expect(await buffer().endSession(scope.tenantId, sessionId, 20, 2)).toBe(true);
      expect((await buffer().getSession(scope.tenantId, sessionId))?.endedAt).toBe(20);
      // Already ended: a second deferred end of the same generation keeps the first end time.
      expect(await buffer().endSession(scope.tenantId, sessionId, 30, 2)).toBe(false);
      expect((await buffer().getSession(scope.tenantId, sessionId))?.endedAt).toBe(20);
      expect(await buffer().endSession(scope.tenantId, rid('unknown-'), 1, 1)).toBe(false);
    });

    it('records who holds a call: an open names its holder, any later open replaces it, an end clears it', async () => {
      const scope = randomScope();
      const sessionId = rid('s-');
      const [g1, g2] = [rid('gw-'), rid('gw-')];
      const record = { sessionId, scope, startedAt: 10, endedAt: null };
      expect(await buffer().openSession({ ...record, holder: g1 })).toEqual({ status: 'opened', session: { ...record, holder: g1, generation: 1 } });
      expect(await buffer().getSession(scope.tenantId, sessionId)).toEqual({ ...record, holder: g1, generation: 1 });
      // A reconnect on another gateway: that gateway holds it now.
      expect(await buffer().openSession({ ...record, holder: g2 })).toEqual({ status: 'existing', session: { ...record, holder: g2, generation: 2 } });
      // A start with no socket (HTTP): nobody holds it.
      expect((await buffer().openSession(record)).session).toEqual({ ...record, generation: 3 });
      await buffer().openSession({ ...record, holder: g1 });
      expect(await buffer().endSession(scope.tenantId, sessionId, 50)).toBe(true);
      expect(await buffer().getSession(scope.tenantId, sessionId)).toEqual({ ...record, endedAt: 50, generation: 4 });
      // Another user's refused start never takes the holder over.
      expect(await buffer().openSession({ ...record, scope: sibling(scope), holder: g2 })).toMatchObject({ status: 'conflict', session: { scope, endedAt: 50 } });
      expect((await buffer().getSession(scope.tenantId, sessionId))?.holder).toBeUndefined();
    });

    it('records a deferred end durably: only for a live call at its generation; a start since cancels it', async () => {
      const scope = randomScope();
      const sessionId = rid('s-');
      const g = rid('gw-');
      await buffer().openSession({ sessionId, scope, startedAt: 1, endedAt: null, holder: g });
      expect(await buffer().deferEnd(scope.tenantId, sessionId, 2, 100)).toBe(false);
      expect(await buffer().deferEnd(scope.tenantId, sessionId, 1, 100)).toBe(true);
      // The socket is gone: nobody holds the call, it ends at 100 unless started again.
      expect(await buffer().getSession(scope.tenantId, sessionId)).toEqual({ sessionId, scope, startedAt: 1, endedAt: null, generation: 1, dueAt: 100 });
      expect(await buffer().openSession({ sessionId, scope, startedAt: 2, endedAt: null, holder: g })).toEqual({
        status: 'existing',
        session: { sessionId, scope, startedAt: 1, endedAt: null, generation: 2, holder: g },
      });
      expect(await buffer().deferEnd(scope.tenantId, sessionId, 1, 100)).toBe(false);
      await buffer().endSession(scope.tenantId, sessionId, 5);
      expect(await buffer().deferEnd(scope.tenantId, sessionId, 2, 100)).toBe(false);
      expect(await buffer().deferEnd(scope.tenantId, rid('unknown-'), 1, 100)).toBe(false);
      expect(await buffer().getSession(scope.tenantId, rid('unknown-'))).toBeNull();
    });

    it('sweeps a deferred end once it is due, and never one cancelled by a start or an end', async () => {
      const scope = randomScope();
      const mine = async (now: number) => (await buffer().dueSessions(now, 0, 1000)).filter((r) => r.scope.tenantId === scope.tenantId);
      const [due, restarted, ended] = [rid('due-'), rid('restarted-'), rid('ended-')];
      for (const sessionId of [due, restarted, ended]) {
        await buffer().openSession({ sessionId, scope, startedAt: 1, endedAt: null, holder: rid('gw-') });
        expect(await buffer().deferEnd(scope.tenantId, sessionId, 1, 1_000)).toBe(true);
      }
      // Not due yet; then due; the restarted and ended ones never.
      expect(await mine(999)).toEqual([]);
      await buffer().openSession({ sessionId: restarted, scope, startedAt: 2, endedAt: null });
      await buffer().endSession(scope.tenantId, ended, 500);
      expect(await mine(1_000)).toEqual([{ sessionId: due, scope, startedAt: 1, endedAt: null, generation: 1, dueAt: 1_000 }]);
      // The sweep ends it with its generation: then it is no longer due.
      expect(await buffer().endSession(scope.tenantId, due, 1_001, 1)).toBe(true);
      expect(await mine(5_000)).toEqual([]);
      expect(await mine(5_000)).toEqual([]);
    });

    it('sweeps the calls of a gateway whose lease ran out the grace ago, never those of a live one or started again elsewhere', async () => {
      const scope = randomScope();
      const mine = async (now: number, graceMs: number) => (await buffer().dueSessions(now, graceMs, 1000)).filter((r) => r.scope.tenantId === scope.tenantId);
      const [dead, alive] = [rid('dead-'), rid('alive-')];
      await buffer().renewLease(dead, 10_000);
      await buffer().renewLease(alive, 10_000);
      const [a, b, moved, http] = [rid('a-'), rid('b-'), rid('moved-'), rid('http-')];
      await buffer().openSession({ sessionId: a, scope, startedAt: 1, endedAt: null, holder: dead });
      await buffer().openSession({ sessionId: b, scope, startedAt: 1, endedAt: null, holder: alive });
      await buffer().openSession({ sessionId: moved, scope, startedAt: 1, endedAt: null, holder: dead });
      await buffer().openSession({ sessionId: http, scope, startedAt: 1, endedAt: null });
      // The call on `moved` reconnected to the live gateway.
      await buffer().openSession({ sessionId: moved, scope, startedAt: 2, endedAt: null, holder: alive });
      // Both leases run to 10 000; the live gateway renews, and a late older renewal never moves a lease back.
      await buffer().renewLease(alive, 20_000);
      await buffer().renewLease(alive, 15_000);
      expect(await mine(10_500, 1_000)).toEqual([]);
      const swept = await mine(11_000, 1_000);
      expect(swept).toEqual([{ sessionId: a, scope, startedAt: 1, endedAt: null, generation: 1, holder: dead }]);
      expect(await buffer().endSession(scope.tenantId, a, 11_000, swept[0]!.generation)).toBe(true);
      expect(await mine(20_999, 1_000)).toEqual([]);
      // The live gateway stops renewing: its calls are due once its lease is the grace past.
      expect((await mine(21_000, 1_000)).map((r) => r.sessionId).sort()).toEqual([b, moved].sort());
    });

    it('sweeps at most `limit` sessions at a time', async () => {
      const scope = randomScope();
      for (let i = 0; i < 3; i++) {
        const sessionId = rid('s-');
        await buffer().openSession({ sessionId, scope, startedAt: 1, endedAt: null });
        await buffer().deferEnd(scope.tenantId, sessionId, 1, 10);
      }
      expect((await buffer().dueSessions(10, 0, 2)).length).toBeLessThanOrEqual(2);
      expect(await buffer().dueSessions(10, 0, 0)).toEqual([]);
      const swept = new Set<string>();
      for (let round = 0; round < 10; round++) {
        const due = await buffer().dueSessions(10, 0, 2);
        for (const r of due) {
          if (r.scope.tenantId === scope.tenantId) swept.add(r.sessionId);
          await buffer().endSession(r.scope.tenantId, r.sessionId, 10, r.generation);
        }
        if (due.length === 0) break;
      }
      expect(swept.size).toBe(3);
    });

    it('finds the seq of a stored turnId, also after the turn left the buffer; null for one never stored', async () => {
      const scope = randomScope();
      const first = makeTurnInput({ turnId: rid('t-') });
      const second = makeTurnInput({ turnId: rid('t-') });
      await buffer().append(scope, 's-1', first);
      await buffer().append(scope, 's-1', second);
      expect(await buffer().seqOf(scope, second.turnId)).toBe(2);
      await buffer().remove(scope, [first.turnId]);
      expect(await buffer().seqOf(scope, first.turnId)).toBe(1);
      expect(await buffer().seqOf(scope, rid('never-'))).toBeNull();
      expect(await buffer().seqOf(sibling(scope), second.turnId)).toBeNull();
    });

    it('gives a session id one owner: another user or agent of the tenant gets a conflict and changes nothing', async () => {
      const alice = randomScope();
      const bob = sibling(alice);
      const otherAgent = { ...alice, agentId: rid('agent-') };
      const sessionId = rid('shared-');
      const aliceRecord = { sessionId, scope: alice, startedAt: 10, endedAt: null, generation: 1 };
      expect(await buffer().openSession({ sessionId, scope: alice, startedAt: 10, endedAt: null })).toEqual({ status: 'opened', session: aliceRecord });
      expect(await buffer().openSession({ sessionId, scope: bob, startedAt: 20, endedAt: null })).toEqual({ status: 'conflict', session: aliceRecord });
      expect((await buffer().openSession({ sessionId, scope: otherAgent, startedAt: 30, endedAt: null })).status).toBe('conflict');
      expect(await buffer().getSession(alice.tenantId, sessionId)).toEqual(aliceRecord);
      // Forgetting bob never deletes the session bob was refused.
      await buffer().forget(bob);
      expect(await buffer().getSession(alice.tenantId, sessionId)).toEqual(aliceRecord);
      // The same id in another tenant is another session.
      const elsewhere = { ...randomScope(), agentId: bob.agentId, userId: bob.userId };
      expect((await buffer().openSession({ sessionId, scope: elsewhere, startedAt: 40, endedAt: null })).status).toBe('opened');
    });

    it('settles users racing to open one session id on exactly one owner', async () => {
      const alice = randomScope();
      const users = [alice, sibling(alice), sibling(alice), sibling(alice)];
      const sessionId = rid('race-');
      const outcomes = await Promise.all(users.map((scope, i) => buffer().openSession({ sessionId, scope, startedAt: i, endedAt: null })));
      expect(outcomes.filter((o) => o.status === 'opened')).toHaveLength(1);
      expect(outcomes.filter((o) => o.status === 'conflict')).toHaveLength(users.length - 1);
      const owner = outcomes.find((o) => o.status === 'opened')!.session.scope;
      for (const o of outcomes) expect(o.session.scope).toEqual(owner);
      expect((await buffer().getSession(alice.tenantId, sessionId))?.scope).toEqual(owner);
    });

    it('forgets one user completely without touching other users or tenants', async () => {
      const a = randomScope();
      const b = sibling(a);
      const otherTenant = { ...randomScope(), agentId: a.agentId, userId: a.userId };
      const victim = makeTurnInput({ turnId: 'forget-me', tokens: 5 });
      for (const s of [a, b, otherTenant]) {
        await buffer().append(s, 's-x', { ...victim });
        await buffer().append(s, 's-x', makeTurnInput({ tokens: 5 }));
      }
      const sessA = { sessionId: rid('s-'), scope: a, startedAt: 1, endedAt: null };
      const sessB = { sessionId: rid('s-'), scope: b, startedAt: 2, endedAt: null };
      await buffer().openSession(sessA);
      await buffer().openSession(sessB);

      await buffer().forget(a);

      expect(await buffer().list(a)).toEqual([]);
      expect(await buffer().pendingTokens(a)).toBe(0);
      expect(await buffer().getSession(a.tenantId, sessA.sessionId)).toBeNull();
      const reAppended = await buffer().append(a, 's-x', { ...victim });
      expect(reAppended.duplicate).toBe(false);
      expect(reAppended.pendingTokens).toBe(5);

      expect(await buffer().list(b)).toHaveLength(2);
      expect(await buffer().pendingTokens(b)).toBe(10);
      expect(await buffer().getSession(b.tenantId, sessB.sessionId)).toEqual({ ...sessB, generation: 1 });
      expect(await buffer().list(otherTenant)).toHaveLength(2);
      expect((await buffer().append(otherTenant, 's-x', { ...victim })).duplicate).toBe(true);
    });
  });
}
