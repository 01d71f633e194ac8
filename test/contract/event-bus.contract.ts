import { describe, expect, it } from 'vitest';
import type { EventBus, MemgateEvent } from '../../src/ports/event-bus.ts';
import { makeEvent, randomScope } from '../support/fixtures.ts';
import { useSubject, type ContractOptions } from '../support/subject.ts';
import { waitFor } from '../support/wait.ts';

const WAIT_MS = 5_000;

/**
 * The EventBus contract: fan-out to every subscriber, unsubscribe, isolation
 * from throwing subscribers. Delivery may be asynchronous (a NATS adapter), so
 * receivers keep only this test's tenant and the test polls.
 */
export function eventBusContract(name: string, make: () => Promise<EventBus>, opts: ContractOptions<EventBus> = {}): void {
  describe(`EventBus contract: ${name}`, () => {
    const events = useSubject(make, opts);

    function receiver(tenantId: string): { got: MemgateEvent[]; handler: (e: MemgateEvent) => void } {
      const got: MemgateEvent[] = [];
      return { got, handler: (e) => (e.tenantId === tenantId ? void got.push(e) : undefined) };
    }

    it('publishing with no subscriber is fine', () => {
      expect(() => events().publish(makeEvent(randomScope()))).not.toThrow();
    });

    it('fans an event out to every subscriber, unchanged', async () => {
      const scope = randomScope();
      const one = receiver(scope.tenantId);
      const two = receiver(scope.tenantId);
      events().subscribe(one.handler);
      events().subscribe(two.handler);
      const event = makeEvent(scope, 'extraction.finished', { turnsArchived: 3, acusIndexed: 2, ids: ['a', 'b'] });
      events().publish(event);
      await waitFor(() => one.got.length === 1 && two.got.length === 1, WAIT_MS, 'both subscribers');
      expect(one.got[0]).toEqual(event);
      expect(two.got[0]).toEqual(event);
    });

    it('delivers one publisher’s events in order', async () => {
      const scope = randomScope();
      const r = receiver(scope.tenantId);
      events().subscribe(r.handler);
      for (let i = 0; i < 20; i++) events().publish(makeEvent(scope, 'turn.appended', { seq: i }));
      await waitFor(() => r.got.length === 20, WAIT_MS, '20 events');
      expect(r.got.map((e) => e.data['seq'])).toEqual(Array.from({ length: 20 }, (_, i) => i));
    });

    it('stops delivering to an unsubscribed handler only', async () => {
      const scope = randomScope();
      const gone = receiver(scope.tenantId);
      const stays = receiver(scope.tenantId);
      const unsubscribe = events().subscribe(gone.handler);
      events().subscribe(stays.handler);
      events().publish(makeEvent(scope, 'session.started'));
      await waitFor(() => gone.got.length === 1 && stays.got.length === 1, WAIT_MS, 'first event');
      unsubscribe();
      unsubscribe();
      events().publish(makeEvent(scope, 'session.ended'));
      await waitFor(() => stays.got.length === 2, WAIT_MS, 'second event');
      expect(gone.got.map((e) => e.type)).toEqual(['session.started']);
    });

    it('keeps delivering to others when a subscriber throws', async () => {
      const scope = randomScope();
      const r = receiver(scope.tenantId);
      events().subscribe(() => {
        throw new Error('broken dashboard');
      });
      events().subscribe(r.handler);
      expect(() => events().publish(makeEvent(scope, 'fact.superseded'))).not.toThrow();
      events().publish(makeEvent(scope, 'acus.indexed'));
      await waitFor(() => r.got.length === 2, WAIT_MS, 'both events despite the thrower');
      expect(r.got.map((e) => e.type)).toEqual(['fact.superseded', 'acus.indexed']);
    });
  });
}
