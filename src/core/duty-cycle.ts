/**
 * A share of one core for background work: after a piece of work that took t ms, the next
 * starts no sooner than t·(1/share − 1) ms later, so over time the work keeps the CPU busy at
 * most `share` of the time, however much of it is waiting. Pieces run one at a time, in the
 * order they asked. share 1: no rest at all.
 */
export class DutyCycle {
  private resumeAt = -Infinity;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly share: number,
    private readonly now: () => number = () => performance.now(),
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
  ) {
    if (!(share > 0 && share <= 1)) throw new RangeError(`a duty cycle's share must be in (0, 1], got ${share}`);
  }

  /** Run `work` when its turn and the rest of the previous piece allow. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.tail.then(async () => {
      const wait = this.resumeAt - this.now();
      if (wait > 0) await this.sleep(wait);
      const started = this.now();
      try {
        return await work();
      } finally {
        const took = this.now() - started;
        this.resumeAt = this.now() + took * (1 / this.share - 1);
      }
    });
    this.tail = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }
}
