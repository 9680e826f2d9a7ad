// P13: the batched dispatcher's workflow starts behind the committed offsets. Every delivery a batched fan-out wrote
// carries the hand-off marker (deliveries.handoff_since), so once the fan-out has committed the hand-off sweep
// starts whatever this process does not get to: the batch need not wait for Temporal. A merchant whose deliveries
// all need a workflow (slow lane, ordering, throttle) then costs the other merchants' batches no start round trips.
// Backpressure: at most `maxInHand` deliveries waiting for their start; a submit beyond that waits for room.
import type { Logger } from '../lib/logger.js';
import type { DeliveryToStart } from '../outbound/delivery-start.js';

export interface BackgroundStarts {
  submit(deliveries: DeliveryToStart[]): Promise<void>;
  /** Resolves when no start is in hand (shutdown, tests). */
  drain(): Promise<void>;
}

export function createBackgroundStarts(
  start: (deliveries: DeliveryToStart[]) => Promise<unknown>,
  logger: Logger,
  maxInHand: number,
): BackgroundStarts {
  let inHand = 0;
  const running = new Set<Promise<void>>();
  return {
    async submit(deliveries) {
      if (deliveries.length === 0) return;
      while (inHand > 0 && inHand + deliveries.length > maxInHand) await Promise.race(running);
      inHand += deliveries.length;
      const task: Promise<void> = start(deliveries)
        .then(
          () => undefined,
          // Their hand-off marker stays: the sweep starts them after outbound.batched.handoff_grace.
          (error: Error) =>
            logger.warn(
              { error: error.name, deliveries: deliveries.length },
              'workflow starts failed; the hand-off sweep takes them over',
            ),
        )
        .finally(() => {
          inHand -= deliveries.length;
          running.delete(task);
        });
      running.add(task);
    },
    async drain() {
      while (running.size) await Promise.all([...running]);
    },
  };
}
