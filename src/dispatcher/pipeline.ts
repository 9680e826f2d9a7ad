// P2: the batched mode's first attempts behind the committed offsets. Once the fan-out transaction has committed,
// every delivery the dispatcher owns carries handoff_since, and the hand-off sweep gives it a workflow if this
// process dies before it is DELIVERED or handed off (docs/outbound.md). So the batch's offsets need not wait for the
// POSTs: the handler submits the sends here and returns, and the consumer fetches the next batch while they run.
// Backpressure: at most `depth` deliveries in hand; a submit waits until its share fits (a burst then runs at the
// same rate as without the pipeline, one Kafka batch ahead). Shutdown drains what is in hand.
import { Gauge } from 'prom-client';
import type { Logger } from '../lib/logger.js';
import { registry } from '../metrics/registry.js';

export const firstAttemptsInHand = new Gauge({
  name: 'apipay_dispatcher_first_attempts_in_hand',
  help: 'Batched first attempts submitted after their offsets were committed and not yet settled',
  registers: [registry],
});

export interface Pipeline {
  /** Resolves once `work` (covering `count` deliveries) has been taken in hand; `work` runs on. */
  submit(count: number, work: () => Promise<unknown>): Promise<void>;
  /** Resolves when nothing is in hand (shutdown, tests). */
  drain(): Promise<void>;
  readonly inHand: number;
}

export function createPipeline(depth: number, logger: Logger): Pipeline {
  let inHand = 0;
  const running = new Set<Promise<void>>();
  let waiting: (() => void)[] = [];
  const wake = () => {
    const woken = waiting;
    waiting = [];
    for (const resolve of woken) resolve();
  };
  return {
    async submit(count, work) {
      const share = Math.max(1, Math.min(count, depth)); // a batch larger than the depth runs alone
      while (inHand > 0 && inHand + share > depth) await new Promise<void>((resolve) => waiting.push(resolve));
      inHand += share;
      firstAttemptsInHand.set(inHand);
      const task: Promise<void> = work()
        .then(
          () => undefined,
          // The deliveries keep handoff_since: the sweep starts their workflows after outbound.batched.handoff_grace.
          (error: Error) =>
            logger.warn(
              { error: error.name, deliveries: count },
              'batched first attempts failed; the hand-off sweep takes them over',
            ),
        )
        .finally(() => {
          inHand -= share;
          firstAttemptsInHand.set(inHand);
          running.delete(task);
          wake();
        });
      running.add(task);
    },
    async drain() {
      while (running.size) await Promise.all([...running]);
    },
    get inHand() {
      return inHand;
    },
  };
}
