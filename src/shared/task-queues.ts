// Task-queue names every side agrees on (worker, dispatcher, API). Tests pass their own to stay isolated.
export const TASK_QUEUES = {
  delivery: 'apipay-outbound-delivery',
  reconciliation: 'apipay-inbound-reconciliation',
  smoke: 'apipay-smoke',
} as const;

export type TaskQueues = { [K in keyof typeof TASK_QUEUES]: string };

const SLOW_LANE = '.slow-lane';

/** M2: the activity task queue of a delivery queue's slow lane (endpoints that keep failing or hang). */
export const slowLaneQueue = (deliveryQueue: string) => `${deliveryQueue}${SLOW_LANE}`;

/** P15: the delivery queue a slow lane belongs to (the queue itself when it is not a slow lane): where probes run. */
export const deliveryQueueOf = (queue: string) => (queue.endsWith(SLOW_LANE) ? queue.slice(0, -SLOW_LANE.length) : queue);
