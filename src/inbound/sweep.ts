// I6: the durable safety net. Finds receipts older than the grace whose workflow was never recorded as started
// (the process died between the 200 and the start, Temporal was down, or the ingress's starter left a backlog to it),
// re-extracts the event from the stored raw bytes (I2) and starts it idempotently. Runs periodically in the worker
// process. P3: each sweep claims its batch with FOR UPDATE SKIP LOCKED, so several sweeps (worker replicas, or the
// loop's own parallel claimers) never pick the same receipt, and starts the batch at bounded concurrency. R18: a start
// continues the trace kept in the receipt (its traceparent).
import type { Client } from '@temporalio/client';
import { and, asc, inArray, isNull, lt } from 'drizzle-orm';
import pLimit from 'p-limit';
import type { Profile } from '../config/profile.js';
import type { Db } from '../db/client.js';
import { webhookReceipts } from '../db/schema/index.js';
import type { Logger } from '../lib/logger.js';
import { ingressMetrics } from '../metrics/inbound-ingress.js';
import { context, contextFrom } from '../tracing/context.js';
import { createProviderRegistry, type ProviderRegistry } from '../providers/index.js';
import { markStarted, startReconciliation } from './reconciliation-starter.js';
import { backlogGate, type BacklogGate } from './backlog-gate.js';
import { startRateLimiter, type StartRateLimiter } from './start-rate.js';

export interface SweepOptions {
  db: Db;
  temporal: Client;
  profile: Profile;
  taskQueue: string;
  /** Only receipts of these providers: the ones this process can extract (and, in tests, its own). */
  providers: ProviderRegistry;
  /** A receipt younger than this is probably still being started by the ingress. */
  olderThanMs: number;
  /** Receipts claimed per sweep (one short transaction holds their row locks while they are started). */
  limit: number;
  /** Starts in flight per sweep (default 32). */
  concurrency?: number;
  /** P7: the process's start budget, shared with the ingress starter when both run in one process. */
  rate?: StartRateLimiter;
  /** P3: holds starts while the task queue's backlog is full (asked before a claim, and per start). */
  gate?: BacklogGate;
  logger?: Logger;
  now?: () => Date;
}

export interface SweepResult {
  found: number;
  started: number;
  alreadyStarted: number;
  failed: number;
}

export async function sweepUnstartedReceipts(options: SweepOptions): Promise<SweepResult> {
  const now = options.now?.() ?? new Date();
  const names = [...options.providers.keys()];
  const result: SweepResult = { found: 0, started: 0, alreadyStarted: 0, failed: 0 };
  if (names.length === 0) return result;
  // The claim: rows locked by another sweep are skipped, not waited for; the locks end with this transaction, so a
  // sweep that dies leaves its rows to the next one (the starts it made are idempotent, I6).
  return options.db.transaction(async (tx) => {
    const rows = await tx
      .select({
        id: webhookReceipts.id,
        provider: webhookReceipts.provider,
        rawBody: webhookReceipts.rawBody,
        receivedAt: webhookReceipts.receivedAt,
        traceparent: webhookReceipts.traceparent,
      })
      .from(webhookReceipts)
      .where(
        and(
          isNull(webhookReceipts.workflowStartedAt),
          lt(webhookReceipts.receivedAt, new Date(now.getTime() - options.olderThanMs)),
          inArray(webhookReceipts.provider, names),
        ),
      )
      .orderBy(asc(webhookReceipts.receivedAt))
      .limit(options.limit)
      .for('update', { skipLocked: true });
    result.found = rows.length;
    const done: number[] = [];
    await pLimit(options.concurrency ?? 32).map(rows, async (row) => {
      try {
        const event = options.providers.get(row.provider)!.extract(row.rawBody);
        await options.rate?.acquire();
        await options.gate?.acquire();
        // R18: the start joins the trace of the request that wrote the receipt.
        const outcome = await context.with(contextFrom(row.traceparent), () =>
          startReconciliation(options.temporal, options.taskQueue, {
            provider: row.provider,
            receiptId: row.id,
            event,
            // The 200 went out right after this receipt committed; the receipt time is the closest durable record.
            acknowledgedAt: row.receivedAt.toISOString(),
          }),
        );
        if (outcome === 'started') result.started += 1;
        else result.alreadyStarted += 1;
        ingressMetrics.workflowStarts.inc({ via: 'sweep', result: outcome });
        done.push(row.id);
      } catch (error) {
        result.failed += 1;
        ingressMetrics.workflowStarts.inc({ via: 'sweep', result: 'failed' });
        options.logger?.warn({ err: error, receiptId: row.id, provider: row.provider }, 'sweep could not start a reconciliation');
      }
    });
    await markStarted(tx, done);
    return result;
  });
}

/**
 * Sweeps every `intervalMs`; a full batch is followed at once by the next. `parallel` claimers (default 2) sweep at
 * the same time, each its own batch, so the tail of one batch does not leave Temporal idle. stop() waits for them.
 */
export function startSweepLoop(options: SweepOptions & { intervalMs: number; logger: Logger; parallel?: number }): {
  stop: () => Promise<void>;
} {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const claimer = async () => {
    let result: SweepResult;
    do {
      await options.gate?.ready(); // outside the claim's transaction: its row locks are not held while Temporal catches up
      result = await sweepUnstartedReceipts(options);
      if (result.found > 0) options.logger.info(result, 'swept unstarted receipts');
    } while (!stopped && result.found === options.limit && result.failed < result.found);
  };
  const tick = () => {
    running = (async () => {
      try {
        await Promise.all(Array.from({ length: Math.max(1, options.parallel ?? 2) }, claimer));
      } catch (error) {
        options.logger.warn({ err: error }, 'unstarted-receipt sweep failed; next interval retries');
      }
      if (!stopped) timer = setTimeout(tick, options.intervalMs);
    })();
  };
  timer = setTimeout(tick, options.intervalMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/** The worker process's sweep: every provider of the profile, its interval, grace and start rate, the production task queue. */
export function startInboundSweep(deps: { db: Db; temporal: Client; profile: Profile; logger: Logger; taskQueue: string }) {
  return startSweepLoop({
    ...deps,
    providers: createProviderRegistry(deps.profile.inbound.providers),
    olderThanMs: deps.profile.inbound.unstarted_grace,
    intervalMs: deps.profile.inbound.unstarted_sweep_interval,
    limit: 128,
    rate: startRateLimiter(deps.profile.inbound.reconciliation_start_rate),
    gate: backlogGate({
      temporal: deps.temporal,
      taskQueue: deps.taskQueue,
      max: deps.profile.inbound.reconciliation_backlog_max,
      logger: deps.logger,
    }),
  });
}
