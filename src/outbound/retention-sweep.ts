// O19: the worker's retention sweep. Every `retention.sweep_interval` it expunges the bodies of events received more
// than `retention.bodies` ago, in transactions of at most `retention.sweep_batch` events (SKIP LOCKED: several workers
// sweep disjoint rows), batch after batch until none is left, and counts them (apipay_outbound_bodies_expunged_total).
import type { Profile } from '../config/profile.js';
import type { Db } from '../db/client.js';
import type { Logger } from '../lib/logger.js';
import { bodiesExpunged } from '../metrics/outbound.js';
import { sweepExpiredBodies } from './expunge.js';

/** Sweeps until a batch comes back short; the number expunged. */
export async function sweepRetention(
  db: Db,
  retention: Profile['retention'],
  now: Date = new Date(),
  shouldStop: () => boolean = () => false,
): Promise<number> {
  const cutoff = new Date(now.getTime() - retention.bodies);
  let total = 0;
  while (!shouldStop()) {
    const n = await sweepExpiredBodies(db, cutoff, retention.sweep_batch);
    total += n;
    bodiesExpunged.inc(n);
    if (n < retention.sweep_batch) break;
  }
  return total;
}

export function startRetentionSweep(deps: { db: Db; profile: Profile; logger: Logger }): { stop: () => Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = sweepRetention(deps.db, deps.profile.retention, new Date(), () => stopped)
      .then((n) => {
        if (n > 0) deps.logger.info({ expunged: n }, 'retention sweep expunged event bodies (O19)');
      })
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'retention sweep failed; next run at the next interval'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, deps.profile.retention.sweep_interval);
      });
  };
  timer = setTimeout(tick, Math.min(deps.profile.retention.sweep_interval, 30_000));
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
