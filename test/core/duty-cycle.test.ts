import { expect, it } from 'vitest';
import { DutyCycle } from '../../src/core/duty-cycle.ts';

it('rests t·(1/share − 1) after a piece of t ms, runs pieces one at a time in order, and a failed piece rests too', async () => {
  let clock = 0;
  const rests: number[] = [];
  const duty = new DutyCycle(
    0.25,
    () => clock,
    async (ms) => void (rests.push(ms), (clock += ms)),
  );
  const starts: number[] = [];
  const piece =
    (ms: number, fail = false) =>
    async () => {
      starts.push(clock);
      clock += ms;
      if (fail) throw new Error('encoder down');
      return ms;
    };
  const done = [duty.run(piece(10)), duty.run(piece(4, true)).catch((e: Error) => e.message), duty.run(piece(2))];
  expect(await Promise.all(done)).toEqual([10, 'encoder down', 2]);
  // 10 ms of work at a quarter share: 30 ms of rest before the next; 4 ms: 12 ms.
  expect(starts).toEqual([0, 40, 56]);
  expect(rests).toEqual([30, 12]);
  expect(() => new DutyCycle(0)).toThrow(RangeError);
});
