// The delivery attempt (O7–O9, O13, O15): one signed POST of the stored bytes, recorded exactly once per attempt
// number, with the delivery status and the endpoint's failure streak updated in the same step.
import { ApplicationFailure } from '@temporalio/activity';
import { and, eq, isNull, lte, sql } from 'drizzle-orm';
import type { Profile } from '../config/profile.js';
import type { Db } from '../db/client.js';
import { deliveries, deliveryAttempts, events, webhookEndpoints } from '../db/schema/index.js';
import type { Logger } from '../lib/logger.js';
import { attemptLatency, attemptsTotal, deliveriesFinished, endpointsDisabled, retriesScheduled } from '../metrics/outbound.js';
import { AttemptNotRecordedError, sqlState, withoutDetails } from '../outbound/attempt-record.js';
import { exchange } from '../outbound/exchange.js';
import type { SecretKeys } from '../outbound/keyring.js';
import { signingSecretsFor } from '../outbound/secrets.js';
import { outboundAgents, type PinnedAgents } from '../outbound/pinned-agents.js';
import { UnsafeUrlError, vetEndpointUrl, type LookupAll, type VettedAddress } from '../outbound/url-safety.js';
import type { DeliveryStatus } from '../shared/outbound.js';
import { sign, SIGNATURE_HEADER } from '../signing/index.js';

export type AttemptErrorKind =
  | 'timeout'
  | 'connection'
  | 'redirect'
  | 'client_error'
  | 'server_error'
  | 'invalid_response'
  | 'unsafe_url'
  | 'endpoint_disabled'
  /** The worker stopped while this attempt was in flight; the merchant may or may not have received it. */
  | 'interrupted';

/** Marks an attempt row reserved before its POST and not yet finished (see attemptDelivery). */
const IN_FLIGHT = 'in_flight';

export interface AttemptInput {
  deliveryId: string;
  attemptNumber: number;
  /** Workflow time (ms) when the attempt was scheduled: base of next_attempt_at and of the O13 streak. */
  scheduledAt: number;
  /** The wait before the next retry, or null when this is the cycle's last attempt. */
  retryInMs: number | null;
}

export interface AttemptResult {
  outcome: 'delivered' | 'failed';
  attemptNumber: number;
  responseStatus: number | null;
  errorKind: AttemptErrorKind | null;
  latencyMs: number;
  /** The endpoint is disabled (already, or by this attempt): the rest of the schedule would not be sent. */
  stopRetrying: boolean;
}

export interface DeliveryState {
  status: DeliveryStatus;
  attemptCount: number;
  endpointId: string;
  merchantAccount: string;
  eventType: string;
}

export interface DeliveryActivityDeps {
  db: Db;
  profile: Profile;
  logger: Logger;
  secretsKey: SecretKeys;
  fetch?: typeof fetch;
  /** Resolver for the send-time URL check (O15), injectable for tests; default the system resolver. */
  lookup?: LookupAll;
  /** Where POSTs connect (O15: only to the vetted addresses); default the process's shared pool. */
  agents?: PinnedAgents;
}

class DeliveryNotFoundError extends Error {
  override name = 'DeliveryNotFoundError';
}

/** R4: nothing to sign with; deterministic until an operator adds or rotates a secret, so never retried. */
class MissingSigningSecretError extends Error {
  override name = 'MissingSigningSecretError';
}

interface Outcome {
  succeeded: boolean;
  responseStatus: number | null;
  errorKind: AttemptErrorKind | null;
  errorMessage: string | null;
  excerpt: string | null;
  latencyMs: number;
}

export function createDeliveryActivities(deps: DeliveryActivityDeps) {
  const { db, profile, logger } = deps;
  const http = deps.fetch ?? fetch;
  const agents = deps.agents ?? outboundAgents;
  const timeoutMs = profile.outbound.request_timeout;
  const excerptBytes = profile.outbound.response_excerpt_bytes;

  function post(url: string, addresses: VettedAddress[] | null, body: Buffer, signature: string): Promise<Outcome> {
    return exchange(
      {
        url,
        body,
        // O15: connect to the addresses just vetted, not to whatever a second DNS answer says.
        dispatcher: agents.dispatcherFor(url, addresses),
        headers: { 'content-type': 'application/json', 'user-agent': 'ApiPay-Webhooks/1.0', [SIGNATURE_HEADER]: signature },
      },
      { fetch: http, timeoutMs, excerptBytes },
    );
  }

  /**
   * R3: records the attempt once whatever the answer held. Should PostgreSQL refuse its details anyway, the outcome is
   * recorded without them; should nothing be writable, the activity fails without a second POST (attempt-once).
   */
  async function record(input: AttemptInput, attemptId: number, endpointId: string, outcome: Outcome): Promise<AttemptResult> {
    try {
      return await finish(input, attemptId, endpointId, outcome);
    } catch (error) {
      logger.warn({ deliveryId: input.deliveryId, attempt: input.attemptNumber, sqlState: sqlState(error) }, 'attempt not recordable with its details; recording it without');
      try {
        return await finish(input, attemptId, endpointId, withoutDetails(outcome, error));
      } catch (again) {
        throw new AttemptNotRecordedError(input.deliveryId, input.attemptNumber, again);
      }
    }
  }

  /** Writes the finished attempt, the delivery status and the endpoint streak in one transaction. */
  async function finish(
    input: AttemptInput,
    attemptId: number,
    endpointId: string,
    outcome: Outcome,
  ): Promise<AttemptResult> {
    const now = new Date();
    const scheduledAt = new Date(input.scheduledAt);
    if (outcome.succeeded) {
      // The common case in one statement instead of a five-round-trip transaction (docs/benchmarks.md): finish the
      // attempt, end the endpoint's failure streak, mark the delivery DELIVERED — all only if the attempt was
      // still in flight; otherwise the general path below reads what was recorded instead.
      const done = await db.execute<{ id: string }>(sql`
        with attempt as (
          update ${deliveryAttempts}
             set response_status = ${outcome.responseStatus}, latency_ms = ${outcome.latencyMs}, succeeded = true,
                 error_kind = null, error_message = ${outcome.errorMessage}, response_excerpt = ${outcome.excerpt}
           where id = ${attemptId} and error_kind = ${IN_FLIGHT}
          returning id
        ), streak as (
          update ${webhookEndpoints} set failing_since = null
           where id = ${endpointId} and failing_since is not null and exists (select 1 from attempt)
          returning id
        )
        update ${deliveries}
           set status = 'DELIVERED', attempt_count = greatest(attempt_count, ${input.attemptNumber}), next_attempt_at = null,
               delivered_at = ${now.toISOString()}::timestamptz, failed_at = null, updated_at = ${now.toISOString()}::timestamptz
         where id = ${input.deliveryId} and exists (select 1 from attempt)
        returning id`);
      if (done.length === 1) return report(input, endpointId, outcome, false, false, 'DELIVERED');
    }
    const result = await db.transaction(async (tx) => {
      // Only a row still in flight is finished: if a retried activity has meanwhile marked it interrupted, that
      // record stands and this late outcome is dropped (it is in the log line below).
      const [finished] = await tx
        .update(deliveryAttempts)
        .set({
          responseStatus: outcome.responseStatus,
          latencyMs: outcome.latencyMs,
          succeeded: outcome.succeeded,
          errorKind: outcome.errorKind,
          errorMessage: outcome.errorMessage,
          responseExcerpt: outcome.excerpt,
        })
        .where(and(eq(deliveryAttempts.id, attemptId), eq(deliveryAttempts.errorKind, IN_FLIGHT)))
        .returning({ id: deliveryAttempts.id });
      const recorded = finished
        ? outcome
        : await tx
            .select()
            .from(deliveryAttempts)
            .where(eq(deliveryAttempts.id, attemptId))
            .then(([row]) => ({
              succeeded: row!.succeeded,
              responseStatus: row!.responseStatus,
              errorKind: row!.errorKind as AttemptErrorKind | null,
              errorMessage: row!.errorMessage,
              excerpt: row!.responseExcerpt,
              latencyMs: row!.latencyMs,
            }));
      return { recorded, ...(await applyOutcome(tx, input, endpointId, recorded, scheduledAt, now)) };
    });
    return report(input, endpointId, result.recorded, result.disabledNow, result.stopRetrying, result.status);
  }

  type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];

  /** Idempotent: applying the same recorded outcome twice leaves the same rows. */
  async function applyOutcome(tx: Tx, input: AttemptInput, endpointId: string, recorded: Outcome, scheduledAt: Date, now: Date) {
    let disabledNow = false;
    let endpointDisabled = recorded.errorKind === 'endpoint_disabled';
    if (recorded.succeeded) {
      await tx.update(webhookEndpoints).set({ failingSince: null }).where(and(eq(webhookEndpoints.id, endpointId), sql`${webhookEndpoints.failingSince} is not null`));
    } else if (!endpointDisabled) {
      await tx
        .update(webhookEndpoints)
        .set({ failingSince: scheduledAt })
        // Only the first failure of a streak writes: a failing endpoint's row is not rewritten on every attempt.
        .where(and(eq(webhookEndpoints.id, endpointId), isNull(webhookEndpoints.failingSince)));
      // O13: every attempt since failing_since has failed (a 2xx would have cleared it) for auto_disable_after.
      const cutoff = new Date(scheduledAt.getTime() - profile.outbound.auto_disable_after);
      const disabled = await tx
        .update(webhookEndpoints)
        .set({
          status: 'disabled',
          disabledAt: now,
          disabledReason: sql`'auto-disabled: every attempt failed since ' || ${webhookEndpoints.failingSince}::text || ' (outbound.auto_disable_after)'`,
          updatedAt: now,
        })
        .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.status, 'enabled'), lte(webhookEndpoints.failingSince, cutoff)))
        .returning({ id: webhookEndpoints.id });
      if (disabled[0]) {
        disabledNow = true;
        endpointDisabled = true;
      }
    }
    const last = input.retryInMs === null || endpointDisabled;
    const status: DeliveryStatus = recorded.succeeded ? 'DELIVERED' : last ? 'FAILED' : 'RETRYING';
    await tx
      .update(deliveries)
      .set({
        status,
        attemptCount: sql`greatest(${deliveries.attemptCount}, ${input.attemptNumber})`,
        nextAttemptAt: status === 'RETRYING' ? new Date(scheduledAt.getTime() + input.retryInMs!) : null,
        deliveredAt: status === 'DELIVERED' ? now : null,
        failedAt: status === 'FAILED' ? now : null,
        updatedAt: now,
      })
      .where(eq(deliveries.id, input.deliveryId));
    return { disabledNow, stopRetrying: endpointDisabled, status };
  }

  function report(input: AttemptInput, endpointId: string, recorded: Outcome, disabledNow: boolean, stopRetrying: boolean, status: DeliveryStatus): AttemptResult {
    const outcomeLabel = recorded.succeeded ? 'success' : (recorded.errorKind ?? 'unknown');
    attemptsTotal.inc({ outcome: outcomeLabel });
    attemptLatency.observe({ outcome: outcomeLabel }, recorded.latencyMs / 1000);
    if (status === 'RETRYING') retriesScheduled.inc();
    else deliveriesFinished.inc({ status });
    if (disabledNow) {
      endpointsDisabled.inc();
      logger.warn({ endpointId, deliveryId: input.deliveryId }, 'endpoint auto-disabled: every attempt failed for outbound.auto_disable_after (O13)');
    }
    logger.debug(
      { deliveryId: input.deliveryId, attempt: input.attemptNumber, status: recorded.responseStatus, errorKind: recorded.errorKind, latencyMs: recorded.latencyMs, deliveryStatus: status },
      'delivery attempt',
    );
    return {
      outcome: recorded.succeeded ? 'delivered' : 'failed',
      attemptNumber: input.attemptNumber,
      responseStatus: recorded.responseStatus,
      errorKind: recorded.errorKind,
      latencyMs: recorded.latencyMs,
      stopRetrying,
    };
  }

  return {
    /**
     * One scheduled attempt. Attempt-once design (O7): the row (delivery, attempt_number) is reserved — inserted
     * as in_flight under the unique index — BEFORE the POST, and finished after it. Temporal retries this
     * activity only for infrastructure errors; a retry that finds its number reserved and still in flight knows a
     * previous execution may already have POSTed (the worker died, or the database went away after the POST), so
     * it records that attempt as `interrupted` and does not POST again; a retry that finds it finished re-applies
     * the recorded outcome. Thus one scheduled attempt is at most one POST and exactly one attempt row; the
     * price is that a crash mid-POST costs that attempt (the schedule moves on), which beats an unrecorded
     * duplicate to a merchant.
     */
    async attemptDelivery(input: AttemptInput): Promise<AttemptResult> {
      const [row] = await db
        .select({
          eventBody: events.body,
          endpointId: webhookEndpoints.id,
          url: webhookEndpoints.url,
          endpointStatus: webhookEndpoints.status,
        })
        .from(deliveries)
        .innerJoin(events, eq(events.eventPublicId, deliveries.eventPublicId))
        .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, deliveries.endpointId))
        .where(eq(deliveries.id, input.deliveryId));
      if (!row) throw ApplicationFailure.nonRetryable(`delivery ${input.deliveryId} does not exist`, new DeliveryNotFoundError().name);

      const startedAt = new Date();
      // Everything that can fail for infrastructure reasons before the POST happens before the reservation, so a
      // retry after such a failure is a clean new try, not an "interrupted" attempt.
      let signature: string | undefined;
      if (row.endpointStatus === 'enabled') {
        const secrets = await signingSecretsFor(db, row.endpointId, deps.secretsKey, startedAt);
        if (secrets.length === 0) throw new MissingSigningSecretError(`endpoint ${row.endpointId} has no active signing secret`);
        signature = sign({ payload: row.eventBody, secrets, timestamp: Math.floor(startedAt.getTime() / 1000) });
      }
      const [reserved] = await db
        .insert(deliveryAttempts)
        .values({ deliveryId: input.deliveryId, attemptNumber: input.attemptNumber, startedAt, latencyMs: 0, succeeded: false, errorKind: IN_FLIGHT })
        .onConflictDoNothing({ target: [deliveryAttempts.deliveryId, deliveryAttempts.attemptNumber] })
        .returning({ id: deliveryAttempts.id });
      if (!reserved) {
        const [existing] = await db
          .select()
          .from(deliveryAttempts)
          .where(and(eq(deliveryAttempts.deliveryId, input.deliveryId), eq(deliveryAttempts.attemptNumber, input.attemptNumber)));
        if (existing!.errorKind === IN_FLIGHT) {
          logger.warn({ deliveryId: input.deliveryId, attempt: input.attemptNumber }, 'attempt was interrupted in flight; recorded as interrupted, not re-sent');
          return record(input, existing!.id, row.endpointId, {
            succeeded: false,
            responseStatus: null,
            errorKind: 'interrupted',
            errorMessage: 'the worker stopped while this attempt was in flight; the merchant may or may not have received it',
            excerpt: null,
            latencyMs: 0,
          });
        }
        // Already finished by an earlier execution: re-apply its recorded outcome (the status update may be what failed).
        const recorded: Outcome = {
          succeeded: existing!.succeeded,
          responseStatus: existing!.responseStatus,
          errorKind: existing!.errorKind as AttemptErrorKind | null,
          errorMessage: existing!.errorMessage,
          excerpt: existing!.responseExcerpt,
          latencyMs: existing!.latencyMs,
        };
        const applied = await db.transaction((tx) => applyOutcome(tx, input, row.endpointId, recorded, new Date(input.scheduledAt), new Date()));
        return report(input, row.endpointId, recorded, applied.disabledNow, applied.stopRetrying, applied.status);
      }

      // O13: a disabled endpoint is not attempted; the attempt row says why nothing was sent.
      if (row.endpointStatus === 'disabled') {
        return record(input, reserved.id, row.endpointId, {
          succeeded: false,
          responseStatus: null,
          errorKind: 'endpoint_disabled',
          errorMessage: 'the endpoint is disabled; enable it and retry or recover the delivery',
          excerpt: null,
          latencyMs: 0,
        });
      }
      // O15: checked again at send time, since DNS may now point somewhere it did not at registration.
      let addresses: VettedAddress[] | null;
      try {
        addresses = await vetEndpointUrl(row.url, { allowInsecure: profile.outbound.allow_insecure_urls, lookup: deps.lookup });
      } catch (error) {
        if (!(error instanceof UnsafeUrlError)) throw error;
        return record(input, reserved.id, row.endpointId, {
          succeeded: false,
          responseStatus: null,
          errorKind: 'unsafe_url',
          errorMessage: error.message,
          excerpt: null,
          latencyMs: 0,
        });
      }
      const outcome = await post(row.url, addresses, row.eventBody, signature!);
      return record(input, reserved.id, row.endpointId, outcome);
    },

    /** State a fresh run continues from (operator retry after an earlier run closed). */
    async loadDeliveryState(deliveryId: string): Promise<DeliveryState> {
      const [row] = await db
        .select({
          status: deliveries.status,
          attemptCount: sql<number>`greatest(${deliveries.attemptCount}, coalesce((select max(${deliveryAttempts.attemptNumber}) from ${deliveryAttempts} where ${deliveryAttempts.deliveryId} = ${deliveries.id}), 0))`,
          endpointId: deliveries.endpointId,
          merchantAccount: deliveries.merchantAccount,
          eventType: events.type,
        })
        .from(deliveries)
        .innerJoin(events, eq(events.eventPublicId, deliveries.eventPublicId))
        .where(eq(deliveries.id, deliveryId));
      if (!row) throw ApplicationFailure.nonRetryable(`delivery ${deliveryId} does not exist`, new DeliveryNotFoundError().name);
      return { ...row, attemptCount: Number(row.attemptCount) };
    },

    /** R4: a cycle that a non-retryable error stopped ends FAILED with that reason (O12: retryNow still works). */
    async failDelivery(request: { deliveryId: string; reason: string }): Promise<void> {
      const now = new Date();
      await db
        .update(deliveries)
        .set({ status: 'FAILED', failureReason: request.reason, failedAt: now, nextAttemptAt: null, updatedAt: now })
        .where(and(eq(deliveries.id, request.deliveryId), sql`${deliveries.status} <> 'DELIVERED'`));
      deliveriesFinished.inc({ status: 'FAILED' });
      logger.warn({ deliveryId: request.deliveryId, reason: request.reason }, 'delivery FAILED by a non-retryable error');
    },

    /** O12: a FAILED delivery goes back to PENDING for a new cycle. */
    async reopenDelivery(deliveryId: string): Promise<void> {
      await db
        .update(deliveries)
        .set({ status: 'PENDING', failedAt: null, failureReason: null, nextAttemptAt: new Date(), updatedAt: new Date() })
        .where(and(eq(deliveries.id, deliveryId), eq(deliveries.status, 'FAILED')));
    },
  };
}

export type DeliveryActivities = ReturnType<typeof createDeliveryActivities>;
