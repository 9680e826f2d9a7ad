// I6: the durable safety net. Finds receipts older than the grace whose workflow was never recorded as started
// (the process died between the 200 and the start, or Temporal was down), re-extracts the event from the stored
// raw bytes (I2) and starts it idempotently. Runs periodically in the worker process.
import type { Client } from '@temporalio/client';
import { and, asc, inArray, isNull, lt } from 'drizzle-orm';
import type { Profile } from '../config/profile.js';
import type { Db } from '../db/client.js';
import { webhookReceipts } from '../db/schema/index.js';
import type { Logger } from '../lib/logger.js';
import { ingressMetrics } from '../metrics/inbound-ingress.js';
import { createProviderRegistry, type ProviderRegistry } from '../providers/index.js';
import { markStarted, startReconciliation } from './reconciliation-starter.js';

export interface SweepOptions {
  db: Db;
  temporal: Client;
  profile: Profile;
  taskQueue: string;
  /** Only receipts of these providers: the ones this process can extract (and, in tests, its own). */
  providers: ProviderRegistry;
  /** A receipt younger than this is probably still being started by the ingress. */
  olderThanMs: number;
  limit: number;
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
  const rows = await options.db
    .select({
      id: webhookReceipts.id,
      provider: webhookReceipts.provider,
      rawBody: webhookReceipts.rawBody,
      receivedAt: webhookReceipts.receivedAt,
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
    .limit(options.limit);
  result.found = rows.length;
  const done: number[] = [];
  for (const row of rows) {
    try {
      const event = options.providers.get(row.provider)!.extract(row.rawBody);
      const outcome = await startReconciliation(options.temporal, options.profile, options.taskQueue, {
        provider: row.provider,
        receiptId: row.id,
        event,
        // The 200 went out right after this receipt committed; the receipt time is the closest durable record.
        acknowledgedAt: row.receivedAt.toISOString(),
      });
      if (outcome === 'started') result.started += 1;
      else result.alreadyStarted += 1;
      ingressMetrics.workflowStarts.inc({ via: 'sweep', result: outcome });
      done.push(row.id);
    } catch (error) {
      result.failed += 1;
      ingressMetrics.workflowStarts.inc({ via: 'sweep', result: 'failed' });
      options.logger?.warn({ err: error, receiptId: row.id, provider: row.provider }, 'sweep could not start a reconciliation');
    }
  }
  await markStarted(options.db, done);
  return result;
}

/** Sweeps every `intervalMs` (a full batch is followed at once by the next); stop() waits for a running sweep. */
export function startSweepLoop(options: SweepOptions & { intervalMs: number; logger: Logger }): { stop: () => Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = (async () => {
      try {
        let result: SweepResult;
        do {
          result = await sweepUnstartedReceipts(options);
          if (result.found > 0) options.logger.info(result, 'swept unstarted receipts');
        } while (!stopped && result.found === options.limit && result.failed < result.found);
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

/** The worker process's sweep: every provider of the profile, its interval and grace, the production task queue. */
export function startInboundSweep(deps: { db: Db; temporal: Client; profile: Profile; logger: Logger; taskQueue: string }) {
  return startSweepLoop({
    ...deps,
    providers: createProviderRegistry(deps.profile.inbound.providers),
    olderThanMs: deps.profile.inbound.unstarted_grace,
    intervalMs: deps.profile.inbound.unstarted_sweep_interval,
    limit: 500,
  });
}
