// P3: keeps the reconciliation task queue fed but not flooded. Measured on the dev server during a 50,000-webhook
// burst: with every receipt started at once (156 starts/s) the queue's backlog grew to 20,000 workflow tasks and the
// server dispatched 5.5 of them a second, while the same worker drained 45/s once the starts were over. So the
// ingress starter and the sweep ask this gate before each start: it reads the queue's approximate backlog
// (DescribeTaskQueue with stats, cached by the server for a few seconds), adds the starts made since that figure
// changed, and holds further starts while the sum is at `max`. Receipts wait durably in PostgreSQL meanwhile (the
// sweep takes them in order), which is where a backlog belongs. 0 = no gate. If the server cannot report stats, the
// gate stays open and says so once.
import type { Client } from '@temporalio/client';
import type { Logger } from '../lib/logger.js';

export interface BacklogGateOptions {
  temporal: Client;
  namespace?: string;
  taskQueue: string;
  /** Workflow tasks allowed to wait in the queue (profile inbound.reconciliation_backlog_max). */
  max: number;
  logger?: Logger;
  /** How often a closed gate reads the backlog again. */
  pollMs?: number;
  /** Starts counted since the last changed figure are forgotten after this long (a figure that stays 0). */
  forgetMs?: number;
  now?: () => number;
  /** For tests: the backlog reader. */
  readBacklog?: () => Promise<number>;
}

export interface BacklogGate {
  /** Resolves when one more start fits, and counts it. */
  acquire(): Promise<void>;
  /** Resolves when a start would fit, without counting one (the sweep asks before it claims rows). */
  ready(): Promise<void>;
}

const OPEN: BacklogGate = { acquire: () => Promise.resolve(), ready: () => Promise.resolve() };

export function backlogGate(options: BacklogGateOptions): BacklogGate {
  if (!(options.max > 0)) return OPEN;
  const now = options.now ?? (() => performance.now());
  const pollMs = options.pollMs ?? 1000;
  const forgetMs = options.forgetMs ?? 10_000;
  const read =
    options.readBacklog ??
    (async () => {
      const described = await options.temporal.workflowService.describeTaskQueue({
        namespace: options.namespace ?? options.temporal.options.namespace,
        taskQueue: { name: options.taskQueue },
        taskQueueType: 1, // TASK_QUEUE_TYPE_WORKFLOW: what a start adds to
        reportStats: true,
      });
      const count = described.stats?.approximateBacklogCount;
      if (count === undefined || count === null) throw new Error('no task queue stats');
      return Number(count);
    });
  let backlog = 0;
  let readAt = -Infinity;
  let since = 0; // starts let through since `backlog` last changed
  let sinceFrom = now();
  let broken = false; // the last read failed: open until one succeeds
  let warned = false;
  let reading: Promise<void> | null = null;

  const refresh = () =>
    (reading ??= read()
      .then((value) => {
        if (value !== backlog || now() - sinceFrom >= forgetMs) {
          since = 0;
          sinceFrom = now();
        }
        backlog = value;
        broken = false;
      })
      .catch((error: Error) => {
        if (!warned)
          options.logger?.warn(
            { error: error.message, taskQueue: options.taskQueue },
            'task queue backlog unavailable; reconciliation starts are not gated meanwhile',
          );
        warned = true;
        broken = true;
      })
      .finally(() => {
        readAt = now();
        reading = null;
      }));

  const wait = async (count: boolean) => {
    for (;;) {
      if (now() - readAt >= pollMs) await refresh();
      if (broken || backlog + since < options.max) {
        if (count) since += 1;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  };
  return { acquire: () => wait(true), ready: () => wait(false) };
}
