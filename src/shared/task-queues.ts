// Task-queue names every side agrees on (worker, dispatcher, API). Tests pass their own to stay isolated.
export const TASK_QUEUES = {
  delivery: 'apipay-outbound-delivery',
  reconciliation: 'apipay-inbound-reconciliation',
  smoke: 'apipay-smoke',
} as const;

export type TaskQueues = { [K in keyof typeof TASK_QUEUES]: string };

const SLOW_LANE = '.slow-lane';
const PROBES = '.probes';

/** M2: the activity task queue of a delivery queue's slow lane (endpoints that keep failing or hang). */
export const slowLaneQueue = (deliveryQueue: string) => `${deliveryQueue}${SLOW_LANE}`;

/** P15: the delivery queue a slow lane or probe queue belongs to (the queue itself when it is neither). */
export const deliveryQueueOf = (queue: string) =>
  queue.endsWith(SLOW_LANE) ? queue.slice(0, -SLOW_LANE.length) : queue.endsWith(PROBES) ? queue.slice(0, -PROBES.length) : queue;

/**
 * P18: the task queue of a delivery queue's endpoint probes (workflows and their activities), polled by a worker of its
 * own: a probe's next step never waits behind the delivery queue's backlog, which in a large retry fire is tens of
 * thousands of workflow tasks (docs/benchmarks.md, "One run at N = 100,000").
 */
export const probeQueue = (deliveryQueue: string) => `${deliveryQueueOf(deliveryQueue)}${PROBES}`;
