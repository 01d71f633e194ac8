/**
 * Poll `predicate` until it holds or `timeoutMs` passes (then throw, naming
 * `what`). Suites use it instead of fixed sleeps so that slower adapters
 * (JetStream, Redis) pass without slowing the embedded ones down.
 */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 5_000, what = 'condition', intervalMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) throw new Error(`waitFor: ${what} not met within ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}

/** Let timers and I/O run for `ms` (only to prove that something does NOT happen). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A promise with its resolver: gates a handler until the test opens it. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
