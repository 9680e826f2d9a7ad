// R13: every local step of a reconciliation answers a re-run of its workflow task as it answered the first run.
//
// A local activity runs inside the workflow task that reaches it; its result enters Temporal's history only when
// that task completes. When the task is lost (the worker killed, the task timed out), the task runs again and its
// local activities with it, so a step that asks something whose answer can change (the provider's API, the ledger's
// position of a payment) could answer differently the second time, and the run would take another path than the
// one whose writes (a posting, a transition) the first run already made. Each local step's answer is therefore
// kept in `workflow_step_results` under the key the workflow determines (workflow id, run id, the step's sequence
// number, which the SDK assigns deterministically), and a re-run takes the first durable answer instead of asking
// again. With the answers fixed, a re-run follows the first run's path, and every write on that path is idempotent
// by its own key (the ledger's idempotency key, the transition's (reconciliation, from, to)). docs/reliability.md.
//
// What is kept: a result, or a final failure the workflow acts on (non-retryable, or any failure of a one-try step
// such as the provider query). A retryable failure is not kept: the SDK retries the step under the same key.
import { Context, type Info } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { and, eq, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { workflowStepResults } from '../db/schema/index.js';
import type { Logger } from '../lib/logger.js';
import type { StepFault } from './step-fault.js';

/** The workflows whose local steps are journaled. Deliveries key their one local step by attempt number (O7). */
export const JOURNALED_WORKFLOWS: ReadonlySet<string> = new Set(['reconciliationWorkflow']);
/** Steps the workflow runs once per call (no SDK retry): any failure of theirs is an answer the workflow acts on. */
export const ONE_TRY_STEPS: ReadonlySet<string> = new Set(['queryProviderPayment']);
/** How long an answer is kept: a lost workflow task is retried within minutes; a week leaves room for an outage. */
export const STEP_RESULT_RETENTION_DAYS = 7;

interface StepKey {
  workflowId: string;
  runId: string;
  step: string;
  activity: string;
}

type Stored = { outcome: 'result'; value: unknown } | { outcome: 'failure'; value: { message: string; type: string | null } };

function currentInfo(): Info | null {
  try {
    return Context.current().info;
  } catch {
    return null; // called outside an activity (tests call activities directly)
  }
}

function keyOf(info: Info | null): StepKey | null {
  if (!info || !info.isLocal || !info.workflowExecution || !JOURNALED_WORKFLOWS.has(info.workflowType ?? '')) return null;
  return {
    workflowId: info.workflowExecution.workflowId,
    runId: info.workflowExecution.runId,
    step: info.activityId,
    activity: info.activityType,
  };
}

function aborted(): boolean {
  try {
    return Context.current().cancellationSignal.aborted;
  } catch {
    return false;
  }
}

/** A final failure of this step (one the workflow decides on), as it is kept; null for one the SDK retries. */
function finalFailure(error: unknown, key: StepKey): Stored | null {
  if (!(error instanceof ApplicationFailure))
    return ONE_TRY_STEPS.has(key.activity)
      ? { outcome: 'failure', value: { message: String((error as Error)?.message ?? error), type: null } }
      : null;
  if (!error.nonRetryable && !ONE_TRY_STEPS.has(key.activity)) return null;
  return { outcome: 'failure', value: { message: error.message, type: error.type ?? null } };
}

function answer(stored: Stored): unknown {
  if (stored.outcome === 'result') return stored.value ?? undefined;
  throw ApplicationFailure.create({ message: stored.value.message, type: stored.value.type ?? undefined, nonRetryable: true });
}

type AsyncFunctions = Record<string, (...args: never[]) => Promise<unknown>>;

export interface StepJournalDeps {
  db: Db;
  logger: Logger;
  /** R13 test hook (src/activities/step-fault.ts); absent in production. */
  fault?: StepFault | null;
}

export function createStepJournal(deps: StepJournalDeps) {
  const { db, logger } = deps;
  const fault = deps.fault ?? null;

  async function read(key: StepKey): Promise<Stored | null> {
    const [row] = await db
      .select({ activity: workflowStepResults.activity, outcome: workflowStepResults.outcome, value: workflowStepResults.value })
      .from(workflowStepResults)
      .where(
        and(
          eq(workflowStepResults.workflowId, key.workflowId),
          eq(workflowStepResults.runId, key.runId),
          eq(workflowStepResults.step, key.step),
        ),
      );
    if (!row) return null;
    if (row.activity !== key.activity) {
      // The sequence number names another step: this run's code is not the one that wrote it (a replay bug).
      throw ApplicationFailure.nonRetryable(
        `step ${key.step} of ${key.workflowId} was ${row.activity}, now ${key.activity}`,
        'StepJournalMismatch',
      );
    }
    return { outcome: row.outcome, value: row.value } as Stored;
  }

  /** Keeps `stored` unless an earlier attempt kept its answer first; returns the one that is kept. */
  async function keep(key: StepKey, stored: Stored): Promise<Stored> {
    const inserted = await db
      .insert(workflowStepResults)
      .values({ ...key, outcome: stored.outcome, value: (stored.value ?? null) as never })
      .onConflictDoNothing()
      .returning({ step: workflowStepResults.step });
    if (inserted.length > 0) return stored;
    const first = await read(key);
    return first ?? stored;
  }

  function journaled<F extends (...args: never[]) => Promise<unknown>>(name: string, fn: F): F {
    return (async (...args: never[]) => {
      const info = currentInfo();
      const key = keyOf(info);
      if (!key) {
        if (!fault || !info) return fn(...args);
        // R13's hook covers every step of both workflows, journaled or not (a delivery attempt keys itself, O7).
        const value = await fn(...args);
        await fault('written', { activity: info.activityType, workflowId: info.workflowExecution?.workflowId ?? '' });
        return value;
      }
      const earlier = await read(key);
      if (earlier) {
        logger.info(
          { workflowId: key.workflowId, step: key.step, activity: name },
          'step answered from its first durable answer (R13)',
        );
        return answer(earlier);
      }
      let stored: Stored;
      try {
        stored = { outcome: 'result', value: await fn(...args) };
      } catch (error) {
        const final = finalFailure(error, key);
        if (!final) throw error;
        stored = final;
      }
      // A step that timed out was reported to the workflow as a failure already: a one-try step keeps that failure,
      // any other is retried by the SDK under the same key and keeps nothing now.
      if (aborted()) {
        if (!ONE_TRY_STEPS.has(key.activity)) throw ApplicationFailure.retryable('the step timed out', 'Timeout');
        stored = { outcome: 'failure', value: { message: 'the step timed out', type: 'Timeout' } };
      }
      await fault?.('written', key);
      const kept = await keep(key, stored);
      await fault?.('journaled', key);
      return answer(kept);
    }) as F;
  }

  return {
    wrap<T extends AsyncFunctions>(activities: T): T {
      const wrapped: Record<string, unknown> = {};
      for (const [name, fn] of Object.entries(activities)) wrapped[name] = journaled(name, fn);
      return wrapped as T;
    },

    /** Deletes up to `limit` answers older than the retention; the number deleted. */
    async prune(limit = 1000): Promise<number> {
      const rows = await db.execute<{ n: number }>(sql`
        with old as (
          select workflow_id, run_id, step from ${workflowStepResults}
          where ${lt(workflowStepResults.recordedAt, sql`now() - make_interval(days => ${STEP_RESULT_RETENTION_DAYS})`)}
          limit ${limit}
        )
        delete from ${workflowStepResults} w using old
        where w.workflow_id = old.workflow_id and w.run_id = old.run_id and w.step = old.step`);
      return (rows as unknown as { count?: number }).count ?? 0;
    },
  };
}

export type StepJournal = ReturnType<typeof createStepJournal>;

/**
 * The worker's prune of old answers: every `intervalMs` (default 10 minutes) batches of 5,000 until none is left or 20
 * batches ran (100,000 rows a tick, about six times what a million reconciliations a week leave), errors logged.
 */
export function startStepResultPrune(deps: { db: Db; logger: Logger; intervalMs?: number }): { stop(): void } {
  const journal = createStepJournal({ db: deps.db, logger: deps.logger });
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      let deleted = 0;
      for (let batch = 0; batch < 20; batch++) {
        const n = await journal.prune(5000);
        deleted += n;
        if (n < 5000) break;
      }
      if (deleted > 0) deps.logger.debug({ deleted }, 'pruned old workflow step results (R13)');
    } catch (error) {
      deps.logger.warn({ err: error }, 'could not prune workflow step results (R13); will retry');
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), deps.intervalMs ?? 10 * 60_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
