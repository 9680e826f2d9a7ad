// P1: the batched mode's safety net. A dispatcher killed between the fan-out commit and the hand-off leaves
// deliveries with handoff_since set and neither DELIVERED nor a workflow; Kafka redelivers the batch, but an attempt
// still in flight is left to its owner then, so this sweep (every outbound.batched.sweep_interval, in every
// dispatcher, whatever its mode) starts a workflow for each hand-off older than outbound.batched.handoff_grace:
// attempt 1 again for a PENDING one (the workflow finds attempt 1 reserved and records it `interrupted`, never
// POSTing it twice), the durable timer after attempt 1 for a RETRYING one, the review window for a FAILED one.
// P13: it also starts the probe workflow of an endpoint whose deliveries have been parked longer than the grace.
import type { Db } from '../db/client.js';
import type { Logger } from '../lib/logger.js';
import { createFirstAttemptStore } from '../outbound/first-attempt-store.js';
import { fromRow, handOff, type StartOptions } from '../outbound/delivery-start.js';
import { createParkingStore } from '../outbound/parking-store.js';
import { createProbeStarter } from '../outbound/probe-start.js';

export interface HandoffSweepDeps {
  db: Db;
  logger: Logger;
  start: StartOptions;
  intervalMs: number;
  graceMs: number;
  batch?: number;
}

/** One pass: hands off up to `batch` deliveries; resolves to how many. */
export async function sweepHandoffs(deps: Omit<HandoffSweepDeps, 'intervalMs'>, now = new Date()): Promise<number> {
  const store = createFirstAttemptStore(deps.db);
  const cutoff = new Date(now.getTime() - deps.graceMs);
  // P13: parked deliveries older than the grace whose endpoint's probe is not running (a crash between the fan-out
  // commit and the probe's start, or a probe that ended as a new one was parked) get their probe started again.
  const parkedFor = await createParkingStore(deps.db).staleEndpoints(cutoff);
  if (parkedFor.length)
    await createProbeStarter(deps.start.temporal, deps.start.taskQueue, deps.start.profile, 0).ensure(parkedFor);
  const rows = await store.unhanded(cutoff, deps.batch ?? 500);
  if (rows.length === 0) return 0;
  await handOff(
    deps.db,
    deps.start,
    rows.map((row) => fromRow(row, row)),
  );
  deps.logger.warn({ deliveries: rows.length }, 'hand-off sweep started workflows for deliveries a dispatcher left behind');
  return rows.length;
}

/** Runs sweepHandoffs every intervalMs until stopped; a failed pass is logged and retried on the next tick. */
export function startHandoffSweep(deps: HandoffSweepDeps): { stop: () => Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running
      .then(async () => {
        while ((await sweepHandoffs(deps)) === (deps.batch ?? 500));
      })
      .catch((error: Error) => deps.logger.warn({ error: error.name }, 'hand-off sweep failed; retrying next interval'));
  }, deps.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
