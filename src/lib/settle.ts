// Waiting for many promises at most so long: what has settled by then, and PENDING for the rest (which run on).
// P13: the batched first attempts of a chunk wait for their POSTs at most outbound.batched.patience.
export const PENDING: unique symbol = Symbol('pending');

/** Resolves when every promise has settled or `ms` have passed, whichever is first; unsettled ones are PENDING. */
export async function settleWithin<T>(promises: Promise<T>[], ms: number): Promise<(T | typeof PENDING)[]> {
  if (!Number.isFinite(ms)) return Promise.all(promises);
  const results: (T | typeof PENDING)[] = promises.map(() => PENDING);
  let timer: NodeJS.Timeout | undefined;
  const all = Promise.all(promises.map((p, i) => p.then((v) => void (results[i] = v))));
  await Promise.race([all, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
  return results;
}
