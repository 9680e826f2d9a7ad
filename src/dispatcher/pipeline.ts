// P2: the batched mode's first attempts behind the committed offsets. Once the fan-out transaction has committed,
// every delivery the dispatcher owns carries handoff_since, and the hand-off sweep gives it a workflow if this
// process dies before it is DELIVERED or handed off (docs/outbound.md). So the batch's offsets need not wait for the
// POSTs: the handler submits the deliveries here and returns, and the consumer fetches the next batch while they run.
// Backpressure: at most `depth` deliveries in hand; a submit waits until its share fits (a burst then runs at the
// same rate as without the pipeline, one Kafka batch ahead). Shutdown drains what is in hand.
// P9: at most `maxSends` sends run at once; what is submitted meanwhile waits in hand and goes out merged into one
// send when a send finishes (a group commit of the first attempts). Without a bound every small Kafka batch is a
// send of its own — its own sign, reserve and record statements — and under load the dozens of concurrent sends held
// the database pool the next fan-out waited for. The profile's default bound is 4 (docs/benchmarks.md, "The tails").
import { Gauge } from 'prom-client';
import type { Logger } from '../lib/logger.js';
import { registry } from '../metrics/registry.js';

export const firstAttemptsInHand = new Gauge({
  name: 'apipay_dispatcher_first_attempts_in_hand',
  help: 'Batched first attempts submitted after their offsets were committed and not yet settled',
  registers: [registry],
});

export interface Pipeline<T> {
  /** Resolves once `items` have been taken in hand; they are sent on (possibly merged with others). */
  submit(items: T[]): Promise<void>;
  /** Resolves when nothing is in hand (shutdown, tests). */
  drain(): Promise<void>;
  readonly inHand: number;
}

export interface PipelineOptions<T> {
  depth: number;
  /** Sends running at once; submissions beyond wait in hand and are merged. */
  maxSends: number;
  logger: Logger;
  send: (items: T[]) => Promise<unknown>;
}

export function createPipeline<T>(options: PipelineOptions<T>): Pipeline<T> {
  const { depth, logger } = options;
  let inHand = 0;
  let sending = 0;
  let queued: { items: T[]; share: number }[] = [];
  const running = new Set<Promise<void>>();
  let waiting: (() => void)[] = [];
  const wake = () => {
    const woken = waiting;
    waiting = [];
    for (const resolve of woken) resolve();
  };
  const pump = () => {
    while (sending < Math.max(1, options.maxSends) && queued.length) {
      const taken = queued;
      queued = [];
      const items = taken.flatMap((q) => q.items);
      const share = taken.reduce((n, q) => n + q.share, 0);
      sending += 1;
      const task: Promise<void> = Promise.resolve()
        .then(() => options.send(items))
        .then(
          () => undefined,
          // The deliveries keep handoff_since: the sweep starts their workflows after outbound.batched.handoff_grace.
          (error: Error) =>
            logger.warn(
              { error: error.name, deliveries: items.length },
              'batched first attempts failed; the hand-off sweep takes them over',
            ),
        )
        .finally(() => {
          sending -= 1;
          inHand -= share;
          firstAttemptsInHand.set(inHand);
          running.delete(task);
          wake();
          pump();
        });
      running.add(task);
    }
  };
  return {
    async submit(items) {
      const share = Math.max(1, Math.min(items.length, depth)); // a batch larger than the depth runs alone
      while (inHand > 0 && inHand + share > depth) await new Promise<void>((resolve) => waiting.push(resolve));
      inHand += share;
      firstAttemptsInHand.set(inHand);
      queued.push({ items, share });
      pump();
    },
    async drain() {
      while (running.size || queued.length) await Promise.all([...running]);
    },
    get inHand() {
      return inHand;
    },
  };
}
