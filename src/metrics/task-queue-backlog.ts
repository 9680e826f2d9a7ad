// Issue 22: the approximate backlog of each Temporal task queue the worker polls (DescribeTaskQueue with stats, as
// the P3 backlog gate reads it), refreshed in the background so a scrape runs no RPC (R6). The Helm chart's worker
// HPA scales on it (deploy/helm/apipay, docs/deploy.md).
import type { Client } from '@temporalio/client';
import { Gauge } from 'prom-client';
import { registry } from './registry.js';

export const taskQueueBacklog = new Gauge({
  name: 'apipay_temporal_task_queue_backlog',
  help: 'Tasks waiting in a Temporal task queue (approximate, from DescribeTaskQueue stats), by queue and task type',
  labelNames: ['task_queue', 'type'] as const,
  registers: [registry],
});

const TYPES = { workflow: 1, activity: 2 } as const; // TASK_QUEUE_TYPE_WORKFLOW, TASK_QUEUE_TYPE_ACTIVITY

/** Reads every queue's backlog now and every `intervalMs`; a failed read leaves the last figure and is retried. */
export function watchTaskQueueBacklog(options: {
  temporal: Pick<Client, 'workflowService'>;
  namespace: string;
  taskQueues: string[];
  intervalMs: number;
  onError?: (error: unknown) => void;
}): { refresh: () => Promise<void>; stop: () => void } {
  let warned = false;
  const refresh = async () => {
    for (const taskQueue of options.taskQueues)
      for (const [type, taskQueueType] of Object.entries(TYPES)) {
        try {
          const described = await options.temporal.workflowService.describeTaskQueue({
            namespace: options.namespace,
            taskQueue: { name: taskQueue },
            taskQueueType,
            reportStats: true,
          });
          const count = described.stats?.approximateBacklogCount;
          if (count !== undefined && count !== null) taskQueueBacklog.set({ task_queue: taskQueue, type }, Number(count));
        } catch (error) {
          if (!warned) options.onError?.(error);
          warned = true;
        }
      }
  };
  const timer = setInterval(() => void refresh(), options.intervalMs);
  timer.unref();
  void refresh();
  return { refresh, stop: () => clearInterval(timer) };
}
