// O7, R3, O13, O18, P12: the writes that apply an attempt's outcome to its delivery and endpoint. One write path per
// outcome: a 2xx is one statement, a failure one transaction, and an outcome an earlier execution already stored is
// applied again through the same two. A retry's wait gets its jitter here (so next_attempt_at and the workflow's timer
// agree), and the 2xx that ends a long streak starts the recovery ramp. Used by ./attempt-store.ts.
import { and, eq, sql, type SQL } from 'drizzle-orm';
import { deliveries, deliveryAttempts } from '../db/schema/index.js';
import type { DeliveryStatus } from '../shared/outbound.js';
import type { AttemptErrorKind, AttemptOutcome } from './attempt-record.js';
import { IN_FLIGHT, type Applied, type AttemptInput, type AttemptStoreDeps, type Reservation } from './attempt-types.js';
import { endStreak, recordEndpointFailure } from './endpoint-health.js';
import { backOff, disableGone } from './receiver-signals.js';
import { recoveryStartSql } from './recovery.js';
import { jitteredWait, jitterFraction, nextWait } from './retry-policy.js';
import type { Executor } from './secrets.js';

type AttemptRow = typeof deliveryAttempts.$inferSelect;

export const toOutcome = (row: AttemptRow): AttemptOutcome => ({
  succeeded: row.succeeded,
  responseStatus: row.responseStatus,
  errorKind: row.errorKind as AttemptErrorKind | null,
  errorMessage: row.errorMessage,
  excerpt: row.responseExcerpt,
  latencyMs: row.latencyMs,
  ...(row.retryAfterMs === null ? {} : { retryAfterMs: row.retryAfterMs }),
});

export const reservationOf = (row: AttemptRow): Reservation =>
  row.errorKind === IN_FLIGHT
    ? { kind: 'in_flight', attemptId: row.id, startedAt: row.startedAt }
    : { kind: 'finished', attemptId: row.id, recorded: toOutcome(row) };

export const delivered = (recorded: AttemptOutcome): Applied => ({
  recorded,
  status: 'DELIVERED',
  disabledNow: false,
  stopRetrying: false,
});

/** The columns an in-flight attempt row is finished with. */
const finishedValues = (outcome: AttemptOutcome) => ({
  responseStatus: outcome.responseStatus,
  latencyMs: outcome.latencyMs,
  succeeded: outcome.succeeded,
  errorKind: outcome.errorKind,
  errorMessage: outcome.errorMessage,
  responseExcerpt: outcome.excerpt,
  retryAfterMs: outcome.retryAfterMs ?? null,
});

/** The outcome writes over `deps.db`: markDelivered (one statement), applyFailure (in the caller's transaction), reapply, finish, finishFailures. */
export function createAttemptApplier(deps: AttemptStoreDeps) {
  const { db } = deps;

  /**
   * A 2xx in one statement instead of a five-round-trip transaction (docs/benchmarks.md): `attempt` (the in-flight
   * row finished now, or a success recorded earlier) ends the endpoint's failure streak and marks the delivery
   * DELIVERED. False when `attempt` selects nothing.
   */
  async function markDelivered(input: AttemptInput, endpointId: string, attempt: SQL, now: Date): Promise<boolean> {
    const done = await db.execute<{ id: string }>(sql`
      with attempt as (${attempt}), streak as (${endStreak(endpointId, sql`exists (select 1 from attempt)`, recoveryStartSql(deps.recovery))})
      update ${deliveries}
         set status = 'DELIVERED', attempt_count = greatest(attempt_count, ${input.attemptNumber}), next_attempt_at = null,
             delivered_at = ${now.toISOString()}::timestamptz, failed_at = null, updated_at = ${now.toISOString()}::timestamptz,
             handoff_since = null
       where id = ${input.deliveryId} and exists (select 1 from attempt)
      returning id`);
    return done.length === 1;
  }

  /** A failure, in the caller's transaction: the O13 streak, then RETRYING or (last attempt, or disabled) FAILED. */
  async function applyFailure(
    tx: Executor,
    input: AttemptInput,
    endpointId: string,
    recorded: AttemptOutcome,
    now: Date,
    /** R13: re-applying an outcome a first execution applied in its own transaction: its 429 backoff is not repeated. */
    replay = false,
  ): Promise<Applied> {
    const scheduledAt = new Date(input.scheduledAt);
    const alreadyDisabled = recorded.errorKind === 'endpoint_disabled';
    const lastWait = deps.lastRetryWaitMs ?? input.retryInMs ?? 0;
    let disabledNow = false;
    if (alreadyDisabled) {
      // nothing was sent: no streak, no signal
    } else if (recorded.responseStatus === 410) {
      disabledNow = await disableGone(tx, endpointId, now); // O18: at once, not after auto_disable_after
    } else if (recorded.responseStatus === 429) {
      if (!replay) await backOff(tx, endpointId, recorded.retryAfterMs ?? null, now, lastWait); // O18: slower, not down
    } else {
      disabledNow = await recordEndpointFailure(tx, endpointId, scheduledAt, now, deps.autoDisableAfterMs);
    }
    const stopRetrying = alreadyDisabled || disabledNow || recorded.responseStatus === 410;
    const status: DeliveryStatus = input.retryInMs === null || stopRetrying ? 'FAILED' : 'RETRYING';
    const retryInMs =
      input.retryInMs === null
        ? null
        : jitteredWait(
            nextWait(input.retryInMs, recorded.retryAfterMs, lastWait),
            jitterFraction(input.deliveryId, input.attemptNumber),
            deps.recovery?.jitter ?? 0,
          );
    await tx
      .update(deliveries)
      .set({
        status,
        attemptCount: sql`greatest(${deliveries.attemptCount}, ${input.attemptNumber})`,
        nextAttemptAt: status === 'RETRYING' ? new Date(scheduledAt.getTime() + retryInMs!) : null,
        deliveredAt: null,
        failedAt: status === 'FAILED' ? now : null,
        updatedAt: now,
      })
      .where(eq(deliveries.id, input.deliveryId));
    return {
      recorded,
      status,
      disabledNow,
      stopRetrying,
      ...(retryInMs !== null && retryInMs !== input.retryInMs ? { retryInMs } : {}),
    };
  }

  /** Idempotent: applying the same recorded outcome twice leaves the same rows. */
  async function reapply(input: AttemptInput, attemptId: number, endpointId: string, recorded: AttemptOutcome): Promise<Applied> {
    const now = new Date();
    if (recorded.succeeded) {
      await markDelivered(input, endpointId, sql`select id from ${deliveryAttempts} where id = ${attemptId} and succeeded`, now);
      return delivered(recorded);
    }
    return db.transaction((tx) => applyFailure(tx, input, endpointId, recorded, now, true));
  }

  /** Finishes the in-flight row with `outcome`, or applies what a retried execution recorded on it meanwhile. */
  async function finish(input: AttemptInput, attemptId: number, endpointId: string, outcome: AttemptOutcome): Promise<Applied> {
    const now = new Date();
    const values = finishedValues(outcome);
    if (outcome.succeeded) {
      const finishing = sql`
        update ${deliveryAttempts}
           set response_status = ${values.responseStatus}, latency_ms = ${values.latencyMs}, succeeded = true,
               error_kind = null, error_message = ${values.errorMessage}, response_excerpt = ${values.responseExcerpt}
         where id = ${attemptId} and error_kind = ${IN_FLIGHT}
        returning id`;
      if (await markDelivered(input, endpointId, finishing, now)) return delivered(outcome);
    } else {
      const applied = await db.transaction(async (tx) => {
        const [finished] = await tx
          .update(deliveryAttempts)
          .set(values)
          .where(and(eq(deliveryAttempts.id, attemptId), eq(deliveryAttempts.errorKind, IN_FLIGHT)))
          .returning({ id: deliveryAttempts.id });
        return finished ? applyFailure(tx, input, endpointId, outcome, now) : null;
      });
      if (applied) return applied;
    }
    // Only a row still in flight is finished: if a retried activity has meanwhile marked it interrupted, that record
    // stands and this late outcome is dropped (the activity's log line has it).
    const [row] = await db.select().from(deliveryAttempts).where(eq(deliveryAttempts.id, attemptId));
    return reapply(input, attemptId, endpointId, toOutcome(row!));
  }

  /**
   * P21: the failures of a batched chunk in one transaction (one commit, not one each: an outage's first chunks were
   * a commit per failure, waiting on each other's endpoint rows), the endpoints' rows taken in one order. Null, with
   * nothing written, when any attempt is no longer in flight or the transaction fails: the caller then records each
   * through `finish`, which handles both.
   */
  async function finishFailures(
    items: { input: AttemptInput; attemptId: number; endpointId: string; outcome: AttemptOutcome }[],
  ): Promise<Applied[] | null> {
    const order = items.map((_, i) => i).sort((a, b) => items[a]!.endpointId.localeCompare(items[b]!.endpointId) || a - b);
    const notInFlight = new Error('an attempt is no longer in flight');
    try {
      return await db.transaction(async (tx) => {
        const now = new Date();
        const applied: Applied[] = new Array<Applied>(items.length);
        for (const i of order) {
          const { input, attemptId, endpointId, outcome } = items[i]!;
          const [finished] = await tx
            .update(deliveryAttempts)
            .set(finishedValues(outcome))
            .where(and(eq(deliveryAttempts.id, attemptId), eq(deliveryAttempts.errorKind, IN_FLIGHT)))
            .returning({ id: deliveryAttempts.id });
          if (!finished) throw notInFlight;
          applied[i] = await applyFailure(tx, input, endpointId, outcome, now);
        }
        return applied;
      });
    } catch {
      return null;
    }
  }

  return { markDelivered, applyFailure, reapply, finish, finishFailures };
}
