// I6: starts the reconciliation workflow of a committed receipt and records workflow_started_at. The ingress hands
// receipts over after its 200 and does not wait: the receipt is already durable, and the sweep starts whatever
// this process did not (crash, Temporal unavailable, queue full). R18: each start runs in the context of the request
// that enqueued it, so the workflow joins the request's trace.
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { and, inArray, isNull } from 'drizzle-orm';
import type { Profile } from '../config/profile.js';
import type { Db } from '../db/client.js';
import { webhookReceipts } from '../db/schema/index.js';
import type { Logger } from '../lib/logger.js';
import { context, type Context } from '../tracing/context.js';
import { ingressMetrics } from '../metrics/inbound-ingress.js';
import { RECONCILIATION_WORKFLOW, type ReconciliationInput } from '../shared/inbound.js';
import { buildReconciliationStart } from './start.js';
import type { BacklogGate } from './backlog-gate.js';
import type { StartRateLimiter } from './start-rate.js';

export type StartResult = 'started' | 'already_started';

/** Idempotent: the workflow id is derived from provider + event id, and a closed run is never started again. */
export async function startReconciliation(
  temporal: Client,
  taskQueue: string,
  input: ReconciliationInput,
): Promise<StartResult> {
  try {
    await temporal.workflow.start(RECONCILIATION_WORKFLOW, {
      ...buildReconciliationStart(input, taskQueue),
      // Without this a completed reconciliation could be started a second time by a late sweep.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
    return 'started';
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return 'already_started';
    throw error;
  }
}

/** In a transaction of its own, or in the sweep's claim transaction. */
export async function markStarted(db: Db | Parameters<Parameters<Db['transaction']>[0]>[0], receiptIds: number[]): Promise<void> {
  if (receiptIds.length === 0) return;
  await db
    .update(webhookReceipts)
    .set({ workflowStartedAt: new Date() })
    .where(and(inArray(webhookReceipts.id, receiptIds), isNull(webhookReceipts.workflowStartedAt)));
}

export interface ReconciliationStarter {
  /** Fire and forget; false when the queue is full (the sweep will start it, as it does one that waited too long). */
  enqueue(receiptId: number, input: ReconciliationInput): boolean;
  /** Resolves when everything enqueued so far was attempted and marked (tests, shutdown). */
  idle(): Promise<void>;
}

export interface StarterOptions {
  db: Db;
  temporal: Client;
  profile: Profile;
  taskQueue: string;
  logger: Logger;
  concurrency?: number;
  maxQueue?: number;
  /**
   * P3: a receipt that waited longer than this in the queue is left to the sweep instead (its grace is longer), so
   * during a backlog the starter and the sweep do not both start the same receipt. Default: no bound.
   */
  maxWaitMs?: number;
  /** P7: the process's start budget. */
  rate?: StartRateLimiter;
  /** P3: holds starts while the task queue's backlog is full. */
  gate?: BacklogGate;
}

export function createReconciliationStarter(options: StarterOptions): ReconciliationStarter {
  const concurrency = options.concurrency ?? 32;
  const maxQueue = options.maxQueue ?? 50_000;
  const maxWaitMs = options.maxWaitMs ?? Infinity;
  const queue: { receiptId: number; input: ReconciliationInput; at: number; trace: Context }[] = [];
  const toMark: number[] = [];
  let active = 0;
  let marking: Promise<void> | null = null;
  let waiters: (() => void)[] = [];

  const settleIfIdle = () => {
    if (active === 0 && queue.length === 0 && toMark.length === 0 && !marking) {
      for (const w of waiters) w();
      waiters = [];
    }
  };

  // One UPDATE for every start that finished meanwhile, so starts do not cost a transaction each.
  const flushMarks = () => {
    if (marking || toMark.length === 0) return settleIfIdle();
    const ids = toMark.splice(0, toMark.length);
    marking = markStarted(options.db, ids)
      .catch((error) => options.logger.warn({ err: error, receipts: ids.length }, 'could not mark receipts started; the sweep will'))
      .finally(() => {
        marking = null;
        flushMarks();
      });
  };

  const next = () => {
    while (active < concurrency && queue.length > 0) {
      const job = queue.shift()!;
      if (performance.now() - job.at > maxWaitMs) {
        ingressMetrics.workflowStarts.inc({ via: 'ingress', result: 'deferred' });
        continue;
      }
      active += 1;
      Promise.resolve(options.rate?.acquire())
        .then(() => options.gate?.acquire())
        // P3: the budget and the gate can hold a start for seconds; past the bound it is the sweep's after all.
        .then(() =>
          performance.now() - job.at > maxWaitMs
            ? 'deferred'
            : context.with(job.trace, () => startReconciliation(options.temporal, options.taskQueue, job.input)),
        )
        .then((result) => {
          ingressMetrics.workflowStarts.inc({ via: 'ingress', result });
          if (result !== 'deferred') toMark.push(job.receiptId);
        })
        .catch((error) => {
          ingressMetrics.workflowStarts.inc({ via: 'ingress', result: 'failed' });
          options.logger.warn({ err: error, receiptId: job.receiptId }, 'reconciliation start failed; the sweep will retry');
        })
        .finally(() => {
          active -= 1;
          flushMarks();
          next();
        });
    }
    // Jobs skipped above (past their bound) end nothing that would settle idle() later.
    settleIfIdle();
  };

  return {
    enqueue(receiptId, input) {
      if (queue.length >= maxQueue) return false;
      queue.push({ receiptId, input, at: performance.now(), trace: context.active() });
      next();
      return true;
    },
    idle() {
      return new Promise<void>((resolve) => {
        waiters.push(resolve);
        settleIfIdle();
      });
    },
  };
}
