// O7, R3: the rows of a delivery attempt. An attempt number is reserved (inserted in flight under the unique index)
// before its POST and finished after it, in the same step as the delivery status and the endpoint's failure streak
// (O13, ./endpoint-health.ts); the outcome writes themselves are in ./attempt-apply.ts, the shapes in ./attempt-types.ts.
import { and, eq, sql } from 'drizzle-orm';
import { deliveries, deliveryAttempts, events, webhookEndpoints } from '../db/schema/index.js';
import { createAttemptApplier, reservationOf } from './attempt-apply.js';
import { AttemptNotRecordedError, sqlState, withoutDetails, type AttemptOutcome } from './attempt-record.js';
import {
  IN_FLIGHT,
  type Applied,
  type AttemptInput,
  type AttemptStoreDeps,
  type AttemptTarget,
  type Reservation,
} from './attempt-types.js';
import { EventExpungedError } from './expunge.js';
import { throttleRateSql } from './receiver-signals.js';
import { sendRateSql } from './recovery.js';

export { IN_FLIGHT } from './attempt-types.js';
export type { Applied, AttemptInput, AttemptStoreDeps, AttemptTarget, Reservation } from './attempt-types.js';

export function createAttemptStore(deps: AttemptStoreDeps) {
  const { db, logger } = deps;
  const { reapply, finish, finishFailures } = createAttemptApplier(deps);

  /**
   * R3: records the attempt once whatever the answer held. Should PostgreSQL refuse its details anyway, the outcome
   * is recorded without them; should nothing be writable, this throws (retryable) and no second POST follows.
   */
  async function record(input: AttemptInput, attemptId: number, endpointId: string, outcome: AttemptOutcome): Promise<Applied> {
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
          parked: sql<boolean>`${deliveries.parkedSince} is not null`,
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

    record,

    /**
     * P21: failed attempts (the batched first attempts of one chunk) recorded in one transaction; if that cannot be,
     * each through `record` as before (R3: one refused row loses none of the others). In the order given.
     */
    async recordFailures(
      items: { input: AttemptInput; attemptId: number; endpointId: string; outcome: AttemptOutcome }[],
    ): Promise<Applied[]> {
      if (items.length === 0) return [];
      const together = items.length > 1 ? await finishFailures(items) : null;
      if (together) return together;
      const applied: Applied[] = [];
      for (const it of items) applied.push(await record(it.input, it.attemptId, it.endpointId, it.outcome));
      return applied;
    },

    /** Applies an outcome an earlier execution recorded for this attempt number (Reservation 'finished'). */
    reapplyFinished: reapply,
  };
}

export type AttemptStore = ReturnType<typeof createAttemptStore>;
