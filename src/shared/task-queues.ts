// Task-queue names every side agrees on (worker, dispatcher, API). Tests pass their own to stay isolated.
export const TASK_QUEUES = {
  delivery: 'apipay-outbound-delivery',
  reconciliation: 'apipay-inbound-reconciliation',
  smoke: 'apipay-smoke',
} as const;

export type TaskQueues = { [K in keyof typeof TASK_QUEUES]: string };

/** M2: the activity task queue of a delivery queue's slow lane (endpoints that keep failing or hang). */
export const slowLaneQueue = (deliveryQueue: string) => `${deliveryQueue}.slow-lane`;
