// O7, R3: the rows of a delivery attempt. An attempt number is reserved (inserted in flight under the unique index)
// before its POST and finished after it, in the same step as the delivery status and the endpoint's failure streak
// (O13, ./endpoint-health.ts). One write path per outcome: a 2xx is one statement, a failure one transaction, and
// an outcome an earlier execution already stored is applied again through the same two. P12: a retry's wait gets its
// jitter here (so next_attempt_at and the workflow's timer agree), and the 2xx that ends a long streak starts the ramp.
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { deliveries, deliveryAttempts, events, webhookEndpoints } from '../db/schema/index.js';
import type { Logger } from '../lib/logger.js';
import type { DeliveryStatus, EndpointStatus } from '../shared/outbound.js';
import {
  AttemptNotRecordedError,
  sqlState,
  withoutDetails,
  type AttemptErrorKind,
  type AttemptOutcome,
} from './attempt-record.js';
import { endStreak, recordEndpointFailure } from './endpoint-health.js';
import { EventExpungedError } from './expunge.js';
import { backOff, disableGone, throttleRateSql } from './receiver-signals.js';
import { recoveryStartSql, sendRateSql, type RecoverySettings } from './recovery.js';
import { jitteredWait, jitterFraction, nextWait } from './retry-policy.js';
import type { Executor } from './secrets.js';

/** Marks an attempt row reserved before its POST and not yet finished. */
export const IN_FLIGHT = 'in_flight';

export interface AttemptInput {
  deliveryId: string;
  attemptNumber: number;
  /** Workflow time (ms) when the attempt was scheduled: base of next_attempt_at and of the O13 streak. */
  scheduledAt: number;
  /** The wait before the next retry, or null when this is the cycle's last attempt. */
  retryInMs: number | null;
  /** M2: set when the workflow runs this attempt in the slow lane (never diverted again). */
  lane?: 'slow';
  /** M5: the throttle slot (epoch ms) this attempt already reserved and waited for. */
  slotAt?: number;
}

/** What an attempt sends, and where. */
export interface AttemptTarget {
  eventBody: Buffer;
  endpointId: string;
  url: string;
  endpointStatus: EndpointStatus;
  /** M3: the delivery's place in its ordered endpoint's line; null when unordered. */
  sequence: number | null;
  /** M5. */
  rateLimitPerSecond: number | null;
  /** M2. */
  consecutiveFailures: number;
}

export type Reservation =
  | { kind: 'reserved'; attemptId: number }
  /**
   * An earlier execution reserved this number at `startedAt` and may be POSTing it still, or may have POSTed before it
   * stopped: never POST it again (R3: wait for it while its lease lasts, see awaitInFlight).
   */
  | { kind: 'in_flight'; attemptId: number; startedAt: Date }
  /** An earlier execution finished it: its recorded outcome is applied again (the status update may be what failed). */
  | { kind: 'finished'; attemptId: number; recorded: AttemptOutcome };

/** The recorded outcome and what it did to the delivery and its endpoint. */
export interface Applied {
  recorded: AttemptOutcome;
  status: DeliveryStatus;
  /** This attempt disabled the endpoint (O13). */
  disabledNow: boolean;
  /** The endpoint is disabled (already, or by this attempt): the rest of the schedule would not be sent. */
  stopRetrying: boolean;
  /** O18: the wait before the next attempt when Retry-After made it longer than the schedule's. */
  retryInMs?: number;
}

export interface AttemptStoreDeps {
  db: Db;
  logger: Logger;
  /** Profile outbound.auto_disable_after (O13). */
  autoDisableAfterMs: number;
  /** O18: the schedule's last wait, the most a Retry-After can delay an attempt; default no longer than the schedule. */
  lastRetryWaitMs?: number;
  /** P12: profile outbound.recovery (retry jitter, recovery ramp); absent: neither. */
  recovery?: RecoverySettings;
}

type AttemptRow = typeof deliveryAttempts.$inferSelect;

const toOutcome = (row: AttemptRow): AttemptOutcome => ({
  succeeded: row.succeeded,
  responseStatus: row.responseStatus,
  errorKind: row.errorKind as AttemptErrorKind | null,
  errorMessage: row.errorMessage,
  excerpt: row.responseExcerpt,
  latencyMs: row.latencyMs,
  ...(row.retryAfterMs === null ? {} : { retryAfterMs: row.retryAfterMs }),
});

const reservationOf = (row: AttemptRow): Reservation =>
  row.errorKind === IN_FLIGHT
    ? { kind: 'in_flight', attemptId: row.id, startedAt: row.startedAt }
    : { kind: 'finished', attemptId: row.id, recorded: toOutcome(row) };

const delivered = (recorded: AttemptOutcome): Applied => ({
  recorded,
  status: 'DELIVERED',
  disabledNow: false,
  stopRetrying: false,
});

export function createAttemptStore(deps: AttemptStoreDeps) {
  const { db, logger } = deps;

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
    const values = {
      responseStatus: outcome.responseStatus,
      latencyMs: outcome.latencyMs,
      succeeded: outcome.succeeded,
      errorKind: outcome.errorKind,
      errorMessage: outcome.errorMessage,
      responseExcerpt: outcome.excerpt,
      retryAfterMs: outcome.retryAfterMs ?? null,
    };
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

  return {
    /** O19: throws EventExpungedError (not retried) when the event's body is gone: nothing to send. */
    async target(deliveryId: string): Promise<AttemptTarget | undefined> {
      const [row] = await db
        .select({
          eventId: events.eventPublicId,
          expungedAt: events.expungedAt,
          expungeReason: events.expungeReason,
          eventBody: events.body,
          endpointId: webhookEndpoints.id,
          url: webhookEndpoints.url,
          endpointStatus: webhookEndpoints.status,
          sequence: deliveries.sequence,
          // M5 with O18, P12: the effective rate (a 429 backoff lowers it, a recovery ramp too; either throttles an unthrottled endpoint).
          rateLimitPerSecond: deps.recovery ? sendRateSql(deps.recovery) : throttleRateSql(),
          consecutiveFailures: webhookEndpoints.consecutiveFailures,
        })
        .from(deliveries)
        .innerJoin(events, eq(events.eventPublicId, deliveries.eventPublicId))
        .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, deliveries.endpointId))
        .where(eq(deliveries.id, deliveryId));
      if (!row) return undefined;
      const { eventId, expungedAt, expungeReason, eventBody, ...rest } = row;
      if (eventBody === null) throw new EventExpungedError(eventId, expungedAt, expungeReason);
      return { eventBody, ...rest };
    },

    /** O7: reserves (delivery, attempt number) before the POST, or tells what an earlier execution left there. */
    async reserve(input: AttemptInput, startedAt: Date): Promise<Reservation> {
      const [reserved] = await db
        .insert(deliveryAttempts)
        .values({
          deliveryId: input.deliveryId,
          attemptNumber: input.attemptNumber,
          startedAt,
          latencyMs: 0,
          succeeded: false,
          errorKind: IN_FLIGHT,
        })
        .onConflictDoNothing({ target: [deliveryAttempts.deliveryId, deliveryAttempts.attemptNumber] })
        .returning({ id: deliveryAttempts.id });
      if (reserved) return { kind: 'reserved', attemptId: reserved.id };
      const [existing] = await db
        .select()
        .from(deliveryAttempts)
        .where(and(eq(deliveryAttempts.deliveryId, input.deliveryId), eq(deliveryAttempts.attemptNumber, input.attemptNumber)));
      return reservationOf(existing!);
    },

    /**
     * R3: an attempt another execution holds in flight, watched until it is finished or `until` (epoch ms) passes. A
     * retry of a timed-out activity runs beside the execution it replaces, which may still be POSTing: marking that
     * attempt `interrupted` under it would drop its 2xx and POST the delivery again.
     */
    async awaitInFlight(held: Extract<Reservation, { kind: 'in_flight' }>, until: number, pollMs = 100): Promise<Reservation> {
      for (;;) {
        const [row] = await db.select().from(deliveryAttempts).where(eq(deliveryAttempts.id, held.attemptId));
        const now = reservationOf(row!);
        if (now.kind !== 'in_flight' || Date.now() >= until) return now;
        await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, until - Date.now())));
      }
    },

    /**
     * R3: records the attempt once whatever the answer held. Should PostgreSQL refuse its details anyway, the outcome
     * is recorded without them; should nothing be writable, this throws (retryable) and no second POST follows.
     */
    async record(input: AttemptInput, attemptId: number, endpointId: string, outcome: AttemptOutcome): Promise<Applied> {
      try {
        return await finish(input, attemptId, endpointId, outcome);
      } catch (error) {
        logger.warn(
          { deliveryId: input.deliveryId, attempt: input.attemptNumber, sqlState: sqlState(error) },
          'attempt not recordable with its details; recording it without',
        );
        try {
          return await finish(input, attemptId, endpointId, withoutDetails(outcome, error));
        } catch (again) {
          throw new AttemptNotRecordedError(input.deliveryId, input.attemptNumber, again);
        }
      }
    },

    /** Applies an outcome an earlier execution recorded for this attempt number (Reservation 'finished'). */
    reapplyFinished: reapply,
  };
}

export type AttemptStore = ReturnType<typeof createAttemptStore>;
