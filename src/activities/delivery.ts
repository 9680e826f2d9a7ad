// The delivery activities (O7–O9, O12, O13, O15): each composes the outbound modules — the attempt path shared
// with the batched mode (src/outbound/attempt-path.ts: the attempt store, the sender, an attempt's metrics and
// logs), the delivery rows, lanes, ordering and the throttle.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Profile } from '../config/profile.js';
import type { Db } from '../db/client.js';
import type { Logger } from '../lib/logger.js';
import { attemptsDeferred, deliveriesFinished } from '../metrics/outbound.js';
import { unsent, type AttemptErrorKind } from '../outbound/attempt-record.js';
import { createAttemptPath } from '../outbound/attempt-path.js';
import type { Applied, AttemptInput, AttemptTarget, Reservation } from '../outbound/attempt-store.js';
import { createDeliveryStore, type DeliveryState } from '../outbound/delivery-store.js';
import type { SecretKeys } from '../shared/keyring.js';
import { createInFlightTracker, keepsFailing, type InFlightPermit, type InFlightTracker } from '../outbound/lanes.js';
import type { PinnedAgents } from '../outbound/pinned-agents.js';
import { createRetryParking } from '../outbound/retry-parking.js';
import { predecessorDone, successorOfDelivery } from '../outbound/sequencing.js';
import { reserveSend, reserveSlot } from '../outbound/throttle.js';
import type { LookupAll } from '../outbound/url-safety.js';

export type { AttemptErrorKind, AttemptInput, DeliveryState };

/**
 * Why an attempt was not sent yet (nothing recorded, no attempt counted): M2 run it in the slow lane; M3 wait for the
 * previous delivery to the endpoint (a signal, or a recheck timer); M5 wait `waitMs` for the reserved throttle slot;
 * P15 parked by the endpoint's circuit (wait for the probe's release).
 */
export type Deferral = { kind: 'slow_lane' } | { kind: 'predecessor' } | { kind: 'throttle'; waitMs: number; slotAt: number } | { kind: 'parked' };

export interface AttemptResult {
  /** 'deferred' (with `deferral`) is absent from histories recorded before M2/M3/M5. */
  outcome: 'delivered' | 'failed' | 'deferred';
  deferral?: Deferral;
  /** M3: the delivery of the same ordered endpoint waiting for this one, once this one is DELIVERED or FAILED. */
  successor?: string;
  attemptNumber: number;
  responseStatus: number | null;
  errorKind: AttemptErrorKind | null;
  latencyMs: number;
  /** The endpoint is disabled (already, or by this attempt): the rest of the schedule would not be sent. */
  stopRetrying: boolean;
  /** C5: the outcome as the Temporal UI shows it in the activity's result, e.g. `HTTP 503 in 120 ms`. */
  http?: string;
  /** O18: the merchant's Retry-After (ms), and the wait it makes before the next attempt (absent = the schedule's). */
  retryAfterMs?: number;
  retryInMs?: number;
}

/** C5: one readable line for the workflow page (absent from histories recorded before it). */
export function httpOutcome(r: { responseStatus: number | null; errorKind: string | null; latencyMs: number }): string {
  if (r.responseStatus !== null) return `HTTP ${r.responseStatus}${r.errorKind ? ` (${r.errorKind})` : ''} in ${r.latencyMs} ms`;
  if (r.errorKind === null) return `published in ${r.latencyMs} ms`; // M11: a broker destination confirmed it
  return `no HTTP answer: ${r.errorKind ?? 'unknown'} after ${r.latencyMs} ms`;
}

export interface DeliveryActivityDeps {
  db: Db;
  profile: Profile;
  logger: Logger;
  secretsKey: SecretKeys;
  /** Resolver for the send-time URL check (O15), injectable for tests; default the system resolver. */
  lookup?: LookupAll;
  /** Where POSTs connect (O15: only to the vetted addresses); default the process's shared pool. */
  agents?: PinnedAgents;
  /** M2: the process's per-endpoint in-flight count; one per process (default: a new one per activities object). */
  inFlight?: InFlightTracker;
}

/**
 * M5: the longest wait for a send time taken inside the activity (timers that fired late together); a longer one is a
 * workflow timer. With the 10 s request timeout it stays inside the activity's 30 s start-to-close.
 */
const MAX_SEND_WAIT_MS = 15_000;

/** R3: the longest an attempt waits inside the activity for another execution's attempt in flight (< 30 s start-to-close). */
const IN_FLIGHT_WAIT_MS = 15_000;

class DeliveryNotFoundError extends Error {
  override name = 'DeliveryNotFoundError';
}

const notFound = (deliveryId: string) => ApplicationFailure.nonRetryable(`delivery ${deliveryId} does not exist`, new DeliveryNotFoundError().name);

export function createDeliveryActivities(deps: DeliveryActivityDeps) {
  const { db, profile, logger } = deps;
  const { attempts, sender, observed } = createAttemptPath(deps);
  const rows = createDeliveryStore(db);
  const lanes = profile.outbound.lanes;
  const inFlight = deps.inFlight ?? createInFlightTracker(lanes);
  const parking = createRetryParking(deps);

  /** Metrics and the log line of one attempt (the shared attempt path's), and what the workflow gets back. */
  function report(input: AttemptInput, endpointId: string, applied: Applied): AttemptResult {
    observed(input, endpointId, applied);
    const { recorded, stopRetrying, retryInMs } = applied;
    return {
      outcome: recorded.succeeded ? 'delivered' : 'failed',
      attemptNumber: input.attemptNumber,
      responseStatus: recorded.responseStatus,
      errorKind: recorded.errorKind,
      latencyMs: recorded.latencyMs,
      stopRetrying,
      http: httpOutcome(recorded),
      ...(recorded.retryAfterMs != null ? { retryAfterMs: recorded.retryAfterMs } : {}),
      ...(retryInMs !== undefined ? { retryInMs } : {}),
    };
  }

  function deferred(input: AttemptInput, deferral: Deferral): AttemptResult {
    attemptsDeferred.inc({ reason: deferral.kind });
    logger.debug({ deliveryId: input.deliveryId, attempt: input.attemptNumber, deferral }, 'delivery attempt deferred');
    return { outcome: 'deferred', deferral, attemptNumber: input.attemptNumber - 1, responseStatus: null, errorKind: null, latencyMs: 0, stopRetrying: false };
  }

  /**
   * One scheduled attempt. Attempt-once design (O7): the row (delivery, attempt_number) is reserved — inserted
   * as in_flight under the unique index — BEFORE the POST, and finished after it. Temporal retries this
   * activity only for infrastructure errors; a retry that finds its number reserved and still in flight never
   * POSTs it: within the reservation's lease the execution that made it may still be running (the activity timed
   * out beside it), so the retry waits for its outcome (settleInFlight); past the lease that execution is gone (the
   * worker died, or the database went away after the POST) and the attempt is recorded `interrupted`. A retry that
   * finds it finished re-applies the recorded outcome. Thus one scheduled attempt is at most one POST and exactly one attempt row; the
   * price is that a crash mid-POST costs that attempt (the schedule moves on), which beats an unrecorded
   * duplicate to a merchant.
   */
  async function attemptNow(input: AttemptInput, target: AttemptTarget, paced = false): Promise<AttemptResult> {
    const { endpointId } = target;
    const startedAt = new Date();
    // Everything that can fail for infrastructure reasons before the POST happens before the reservation, so a
    // retry after such a failure is a clean new try, not an "interrupted" attempt.
    const signature = target.endpointStatus === 'enabled' ? await sender.sign(endpointId, target.eventBody, startedAt) : undefined;
    // M5 stage 2 (src/outbound/throttle.ts): the send time is taken before the attempt is reserved (so a long wait can
    // still be a workflow timer) and waited for right before the POST.
    // `paced`: released by the probe at its allowance (P15), not throttled again.
    const throttled = target.endpointStatus === 'enabled' && target.rateLimitPerSecond !== null && !paced;
    const send = throttled ? await reserveSend(db, endpointId, profile.outbound.recovery) : null;
    if (send && send.waitMs > MAX_SEND_WAIT_MS) return deferred(input, { kind: 'throttle', waitMs: send.waitMs, slotAt: send.at });
    // Waited for before the reservation: an attempt is in flight only for its POST and its record (R3's lease).
    await until(send?.at);
    let reservation = await attempts.reserve(input, send ? new Date() : startedAt);
    if (reservation.kind === 'in_flight') reservation = await settleInFlight(input, reservation);
    if (reservation.kind === 'finished') {
      return report(input, endpointId, await attempts.reapplyFinished(input, reservation.attemptId, endpointId, reservation.recorded));
    }
    if (reservation.kind === 'in_flight') {
      logger.warn({ deliveryId: input.deliveryId, attempt: input.attemptNumber }, 'attempt was interrupted in flight; recorded as interrupted, not re-sent');
      const interrupted = unsent('interrupted', 'the worker stopped while this attempt was in flight; the merchant may or may not have received it');
      return report(input, endpointId, await attempts.record(input, reservation.attemptId, endpointId, interrupted));
    }
    const outcome =
      target.endpointStatus === 'disabled'
        ? // O13: a disabled endpoint is not attempted; the attempt row says why nothing was sent.
          unsent('endpoint_disabled', 'the endpoint is disabled; enable it and retry or recover the delivery')
        : await sender.send({ endpointId, url: target.url }, target.eventBody, signature!);
    return report(input, endpointId, await attempts.record(input, reservation.attemptId, endpointId, outcome));
  }

  /**
   * R3: an attempt number another execution holds in flight. While its lease (outbound.in_flight_lease from when it
   * was reserved) lasts, that execution may be alive and POSTing (this is the retry of a timed-out activity, or a
   * local activity run again with its workflow task): wait for its outcome, which is then re-applied, up to
   * IN_FLIGHT_WAIT_MS here and then as a Temporal retry. Past the lease it died with its worker: `interrupted`.
   */
  async function settleInFlight(input: AttemptInput, held: Extract<Reservation, { kind: 'in_flight' }>): Promise<Reservation> {
    const leaseEnds = held.startedAt.getTime() + profile.outbound.in_flight_lease;
    const settled = await attempts.awaitInFlight(held, Math.min(leaseEnds, Date.now() + IN_FLIGHT_WAIT_MS));
    if (settled.kind !== 'in_flight' || Date.now() >= leaseEnds) return settled;
    throw ApplicationFailure.create({
      type: 'AttemptInFlight',
      message: `attempt ${input.attemptNumber} of ${input.deliveryId} is in flight in another execution; waiting for its outcome`,
      nextRetryDelay: Math.max(1, leaseEnds - Date.now()),
    });
  }

  async function until(at: number | undefined): Promise<void> {
    const wait = at === undefined ? 0 : at - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }

  return {
    /**
     * One scheduled attempt (attempt-once: see attemptNow), after the admission of M2 (lane), M3 (ordering) and M5
     * (throttle): an attempt that may not be sent yet returns 'deferred' and records nothing.
     */
    async attemptDelivery(input: AttemptInput): Promise<AttemptResult> {
      const target = await attempts.target(input.deliveryId);
      if (!target) throw notFound(input.deliveryId);
      const { endpointId } = target;
      const enabled = target.endpointStatus === 'enabled';
      // P15: a scheduled retry whose endpoint parks (circuit open, a parked backlog, the return's ramp) is not sent: it
      // waits for the probe's release, which sends the backlog oldest first at the ramp's rate.
      const park = enabled && input.mayPark ? await parking.parkIfParking(input.deliveryId, input.attemptNumber, () => Context.current()) : null;
      if (park === 'parked') return deferred(input, { kind: 'parked' });
      // Waited for its slot (ordering and throttle were checked then), or released by the probe at its allowance (the
      // row says so, not the signal: R20), which M5's slots must not pace a second time.
      const released = park === 'released';
      const admitted = input.slotAt !== undefined || released;
      if (target.parked) await parking.unpark(input.deliveryId); // sent after all: by an operator, or released
      // M3: an ordered delivery's first attempt waits for the delivery before it in the endpoint's line.
      if (enabled && !admitted && input.attemptNumber === 1 && target.sequence !== null) {
        if (!(await predecessorDone(db, endpointId, target.sequence))) return deferred(input, { kind: 'predecessor' });
      }
      // M2: the normal lane takes an endpoint only while it answers and has few attempts in flight here.
      let permit: InFlightPermit | null = null;
      if (enabled && input.lane !== 'slow') {
        permit = keepsFailing(target, lanes) ? null : inFlight.acquire(endpointId);
        if (!permit) return deferred(input, { kind: 'slow_lane' });
      }
      try {
        // M5: take the next send slot; one in the future is waited for in the workflow.
        if (enabled && !admitted && target.rateLimitPerSecond !== null) {
          const slot = await reserveSlot(db, endpointId, profile.outbound.recovery);
          if (slot && slot.waitMs > 0) return deferred(input, { kind: 'throttle', waitMs: slot.waitMs, slotAt: slot.at });
        }
        const result = await attemptNow(input, target, released);
        permit?.release(result.outcome === 'delivered');
        if (target.sequence === null || result.outcome === 'deferred') return result;
        const final = result.outcome === 'delivered' || input.retryInMs === null || result.stopRetrying;
        const successor = final ? await successorOfDelivery(db, input.deliveryId) : null;
        return successor ? { ...result, successor } : result;
      } finally {
        permit?.release();
      }
    },

    /** State a fresh run continues from (operator retry after an earlier run closed). */
    async loadDeliveryState(deliveryId: string): Promise<DeliveryState> {
      const state = await rows.state(deliveryId);
      if (!state) throw notFound(deliveryId);
      return state;
    },

    /** R4: a cycle that a non-retryable error stopped ends FAILED with that reason (O12: retryNow still works). */
    async failDelivery(request: { deliveryId: string; reason: string }): Promise<string | null> {
      await rows.fail(request.deliveryId, request.reason);
      deliveriesFinished.inc({ status: 'FAILED' });
      logger.warn({ deliveryId: request.deliveryId, reason: request.reason }, 'delivery FAILED by a non-retryable error');
      return successorOfDelivery(db, request.deliveryId); // M3: the next one in an ordered endpoint's line may go
    },

    /** O12: a FAILED delivery goes back to PENDING for a new cycle. */
    async reopenDelivery(deliveryId: string): Promise<void> {
      await rows.reopen(deliveryId);
    },
  };
}

export type DeliveryActivities = ReturnType<typeof createDeliveryActivities>;
