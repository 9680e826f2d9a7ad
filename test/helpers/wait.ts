// The one way tests wait on the real servers: poll until a condition holds, and, for an "exactly once"
// assertion, check that nothing more arrives within a bound (no fixed sleep that hopes it was long enough).

/** Polls `probe` until it returns a value other than undefined, null or false, and returns it. */
export async function waitFor<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
  what = 'condition',
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * After the wanted count has been reached: `count` stays at `expected` for `boundMs` (polled), and fails as soon as
 * it grows, with the count it saw. Use it for "delivered exactly once": wait for the first, then for silence.
 */
export async function expectNoMore(
  count: () => number | Promise<number>,
  expected: number,
  boundMs = 1_000,
  what = 'items',
): Promise<void> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const seen = await count();
    if (seen !== expected) throw new Error(`expected ${expected} ${what} to stay ${expected} for ${boundMs} ms, saw ${seen}`);
    if (Date.now() >= deadline) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}
