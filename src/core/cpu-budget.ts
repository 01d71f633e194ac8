/**
 * A share of one core for a thread whose busy time can be read (a worker's event-loop
 * active ms): new work is admitted only while the thread has used no more than `share` of
 * the time since the budget began, with up to `burstMs` of unused time saved up. Unlike a
 * DutyCycle it counts what the thread spent, not how long a piece took, so work that mostly
 * waits (an LLM call) is not held back for its waiting.
 */
export class CpuBudget {
  private balanceMs: number;
  private lastNow: number;
  private lastActive: number;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly share: number,
    private readonly activeMs: () => number,
    private readonly burstMs = 250,
    private readonly now: () => number = () => performance.now(),
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
  ) {
    if (!(share > 0 && share <= 1)) throw new RangeError(`a CPU budget's share must be in (0, 1], got ${share}`);
    this.balanceMs = burstMs;
    this.lastNow = now();
    this.lastActive = activeMs();
  }

  /** Resolves when the thread is within its share; callers are admitted one at a time, in order. */
  admit(): Promise<void> {
    if (this.share === 1) return Promise.resolve();
    const turn = this.tail.then(async () => {
      for (let debt = this.debtMs(); debt > 0; debt = this.debtMs()) await this.sleep(debt / this.share);
    });
    this.tail = turn;
    return turn;
  }

  /** How far the thread is over its share, in busy ms (≤ 0: within it). */
  private debtMs(): number {
    const now = this.now();
    const active = this.activeMs();
    this.balanceMs = Math.min(this.burstMs, this.balanceMs + (now - this.lastNow) * this.share - (active - this.lastActive));
    this.lastNow = now;
    this.lastActive = active;
    return -this.balanceMs;
  }

  /** Start counting anew against another thread's busy time (a restarted worker's counter starts at 0). */
  reset(): void {
    this.lastNow = this.now();
    this.lastActive = this.activeMs();
  }
}
