import { expect, it } from 'vitest';
import { CpuBudget } from '../../src/core/cpu-budget.ts';

it('admits while the thread is within its share, holds work back by its debt, and saves up no more than the burst', async () => {
  let clock = 0;
  let active = 0;
  const sleeps: number[] = [];
  const budget = new CpuBudget(
    0.5,
    () => active,
    100,
    () => clock,
    async (ms) => void (sleeps.push(ms), (clock += ms)),
  );
  // A fresh budget holds a full burst: 100 busy ms may go by without any wait.
  active += 100;
  await budget.admit();
  expect(sleeps).toEqual([]);
  // 60 busy ms more in 20 ms of time: 100 + 10 − 160 = −50 ms, so 100 ms of rest at half a core.
  clock += 20;
  active += 60;
  await budget.admit();
  expect(sleeps).toEqual([100]);
  // A long idle stretch saves up only the burst, not the whole idle time.
  clock += 10_000;
  await budget.admit();
  active += 150;
  await budget.admit();
  expect(sleeps).toEqual([100, 100]);
});

it('counts busy time, not waiting: work that only waits is never held back', async () => {
  let clock = 0;
  const budget = new CpuBudget(
    0.25,
    () => 0,
    50,
    () => clock,
    async () => expect.unreachable('no wait'),
  );
  for (let i = 0; i < 10; i++) {
    clock += 300; // an LLM call of 300 ms, no busy time in the thread
    await budget.admit();
  }
  expect(() => new CpuBudget(0, () => 0)).toThrow(RangeError);
});

it('a share of 1 never reads the clock or waits', async () => {
  const budget = new CpuBudget(
    1,
    () => 5_000,
    0,
    () => 0,
    async () => expect.unreachable('no wait'),
  );
  await budget.admit();
  await budget.admit();
});
