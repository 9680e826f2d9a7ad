// O6/O12: one delivery's cycle — attempt at once, durable backoff timers from the profile, FAILED after the last
// retry, then a review window in which an operator's retryNow starts a new cycle. R20: the first step checks the
// start against the delivery's row (src/activities/delivery-trust.ts); a start naming a delivery it is not POSTs nothing.
import {
  ApplicationFailure,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { AttemptInput, AttemptResult, DeliveryActivities } from '../activities/delivery.js';
import type { createDeliveryTrustActivities } from '../activities/delivery-trust.js';
import {
  DEFAULT_REVIEW_WINDOW_MS,
  DELIVERY_START_REFUSED,
  deliveryStatusQuery,
  orderReleasedSignal,
  parkReleasedSignal,
  retryNowSignal,
  type DeliveryProgress,
  type DeliveryStatus,
  type DeliveryWorkflowInput,
} from '../shared/outbound.js';
import { scheduleWait, timerWait } from '../outbound/retry-policy.js';
import { DELIVERY_ADMISSION, DELIVERY_PARKS, DELIVERY_START_CHECK, PARKED_RETRY_ONCE, RETRY_AFTER, START_DELAYED_RETRY } from './patches.js';
import { failureReason, isActivityFailure, NON_RETRYABLE_ERROR_TYPES } from '../shared/failures.js';
import { SA } from '../shared/search-attributes.js';
import { slowLaneQueue } from '../shared/task-queues.js';

// The HTTP outcome is a value (AttemptResult); an activity only throws for infrastructure trouble (database
// down, worker lost), and those retries are safe because attemptDelivery reserves its attempt number before it
// POSTs and never POSTs twice for one number (see src/activities/delivery.ts). A deterministic error (R4: no
// signing secret, data the database refuses) is not retried: the cycle ends FAILED with its reason. 30 s covers
// the 10 s request timeout plus the database work around it.
const attemptOptions: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_TYPES] },
};

// Retries are regular activities: an operator sees each one (and its retry state) in the Temporal UI.
const remote = proxyActivities<DeliveryActivities>(attemptOptions);
// The first attempt runs as a local activity inside the first workflow task: no activity task round trip and
// fewer history events for the common case of a merchant that answers 2xx at once (docs/benchmarks.md).
const local = proxyLocalActivities<DeliveryActivities>({ ...attemptOptions, localRetryThreshold: '10 seconds' });
const trust = proxyLocalActivities<ReturnType<typeof createDeliveryTrustActivities>>({ ...attemptOptions, localRetryThreshold: '10 seconds' });

/** M3: an ordered delivery rechecks its predecessor this often even without the signal (a safety net, not a poll). */
const ORDER_RECHECK_MS = 15 * 60_000;

export async function deliveryWorkflow(input: DeliveryWorkflowInput): Promise<DeliveryProgress> {
  // P1: a run the batched dispatcher started after its first attempt failed begins in that attempt's status (the
  // start set the DeliveryStatus search attribute to it).
  let status: DeliveryStatus = input.resume?.status ?? 'PENDING';
  let attemptCount = input.priorAttempts ?? 0;
  let nextAttemptAt: number | null = input.resume?.nextAttemptAt ?? null;
  let retryRequested = false;
  let reason: string | undefined; // R4: why the cycle ended FAILED without a merchant answer
  let lane: 'normal' | 'slow' = 'normal'; // M2: once an attempt went to the slow lane, this run's retries go there
  let orderReleased = false; // M3: the previous delivery to the endpoint finished or was skipped
  let parkReleased = false; // P15: the endpoint's probe released this parked retry (a wake-up: R20, the row decides)
  let forced = false; // O12: the wait before this attempt was cut short by retryNow (an operator's attempt is never parked)
  const slow = proxyActivities<DeliveryActivities>({ ...attemptOptions, taskQueue: slowLaneQueue(workflowInfo().taskQueue) });

  setHandler(retryNowSignal, () => {
    retryRequested = true;
  });
  setHandler(orderReleasedSignal, () => {
    orderReleased = true;
  });
  setHandler(parkReleasedSignal, () => {
    parkReleased = true;
  });
  setHandler(deliveryStatusQuery, () => ({
    status,
    attemptCount,
    nextAttemptAt: nextAttemptAt === null ? null : new Date(nextAttemptAt).toISOString(),
    ...(reason === undefined ? {} : { reason }),
  }));

  const setStatus = (next: DeliveryStatus) => {
    if (next !== status) upsertSearchAttributes([{ key: SA.deliveryStatus, value: next }]);
    status = next;
  };

  /**
   * Runs one scheduled attempt until it is sent: a deferred one (nothing recorded, no attempt counted) goes to the
   * slow lane (M2), waits for its predecessor's signal (M3) or sleeps once until its throttle slot (M5), or, parked by
   * the endpoint's circuit (P15), waits for the probe's release or an operator's retry, at most `parkedForMs` (the
   * time its remaining retries would have taken): 'expired' then. Histories from before M2 hold no deferred result,
   * so they never reach the patch.
   */
  async function attemptUntilSent(request: AttemptInput, first: boolean, parkedForMs: number): Promise<AttemptResult | 'expired'> {
    const via = () => (lane === 'slow' ? slow : first && input.firstAttempt !== 'activity' ? local : remote);
    let result = await via().attemptDelivery(request);
    while (result.outcome === 'deferred' && result.deferral && patched(DELIVERY_ADMISSION)) {
      const deferral = result.deferral;
      if (deferral.kind === 'slow_lane') {
        lane = 'slow';
      } else if (deferral.kind === 'predecessor') {
        await condition(() => orderReleased, ORDER_RECHECK_MS);
        orderReleased = false;
      } else if (deferral.kind === 'parked') {
        nextAttemptAt = null; // none scheduled: the probe's release sends it
        if (!(await condition(() => parkReleased || retryRequested, parkedForMs))) return 'expired';
        parkReleased = false;
        // R20: an operator's retry is sent; a release is checked by the activity against what the probe recorded, so
        // a parkReleased signal from anyone else parks it again.
        if (retryRequested) {
          request = { ...request, mayPark: false };
          // O12: one retryNow, one attempt (before, a failed one was followed by another at once).
          if (patched(PARKED_RETRY_ONCE)) retryRequested = false;
        }
      } else {
        await sleep(deferral.waitMs);
        request = { ...request, slotAt: deferral.slotAt };
      }
      // The attempt is scheduled now, after the wait: next_attempt_at and the O13 streak count from here.
      request = { ...request, scheduledAt: Date.now(), ...(lane === 'slow' ? { lane } : {}) };
      result = await via().attemptDelivery(request);
    }
    return result;
  }

  /** M3: the next delivery in an ordered endpoint's line may go now (it also rechecks on its own timer). */
  async function releaseSuccessor(successor: string | null | undefined): Promise<void> {
    if (!successor) return;
    // Not yet started is fine: its first check finds this delivery finished.
    await getExternalWorkflowHandle(successor)
      .signal(orderReleasedSignal)
      .catch(() => undefined);
  }

  /** The attempts of one cycle: true when delivered, false when the schedule is exhausted (→ FAILED). */
  async function runCycle(from = 0): Promise<boolean> {
    const schedule = input.retryScheduleMs;
    for (let index = from; index <= schedule.length; index++) {
      const retryInMs = scheduleWait(schedule, index);
      retryRequested = false; // a retryNow that arrives during this attempt asks for the next one at once
      // P15: a scheduled retry (not the cycle's last, not asked for by an operator) may be parked; one the probe
      // released is not (the activity reads the release from the row: R20).
      const mayPark = index > 0 && retryInMs !== null && !forced && patched(DELIVERY_PARKS);
      parkReleased = false;
      const result = await attemptUntilSent(
        {
          deliveryId: input.deliveryId,
          attemptNumber: attemptCount + 1,
          // Workflow time: the activity computes next_attempt_at and the O13 failure streak from it, so both follow
          // the durable timers (and time skipping in tests) rather than the activity's wall clock.
          scheduledAt: Date.now(),
          retryInMs,
          ...(lane === 'slow' ? { lane } : {}),
          ...(mayPark ? { mayPark } : {}),
        },
        index === 0,
        Math.max(1, schedule.slice(index).reduce((a, b) => a + b, 0)),
      );
      if (result === 'expired') {
        reason = 'parked for the rest of its retry schedule: the endpoint never answered 2xx (circuit open)';
        await releaseSuccessor(await remote.failDelivery({ deliveryId: input.deliveryId, reason }));
        return false;
      }
      attemptCount = result.attemptNumber;
      if (result.outcome === 'delivered') {
        setStatus('DELIVERED');
        nextAttemptAt = null;
        await releaseSuccessor(result.successor);
        return true;
      }
      if (retryInMs === null || result.stopRetrying) {
        await releaseSuccessor(result.successor);
        break;
      }
      setStatus('RETRYING');
      // O18: the activity already capped it by the schedule's last wait; histories from before carry no retryInMs.
      const wait = result.retryInMs !== undefined && result.retryInMs > retryInMs && patched(RETRY_AFTER) ? timerWait(retryInMs, result.retryInMs) : retryInMs;
      nextAttemptAt = Date.now() + wait;
      forced = await condition(() => retryRequested, wait);
    }
    return false;
  }

  if (patched(DELIVERY_START_CHECK)) {
    const check = await trust.checkDeliveryStart({ workflowId: workflowInfo().workflowId, deliveryId: input.deliveryId, priorAttempts: input.priorAttempts });
    if (check.outcome === 'refused') throw ApplicationFailure.create({ type: DELIVERY_START_REFUSED, message: check.reason, nonRetryable: true });
    if (check.status === 'DELIVERED') {
      // Delivered already: whatever the start says, there is nothing to send.
      setStatus('DELIVERED');
      return { status, attemptCount: check.attemptCount, nextAttemptAt: null };
    }
  }

  if (input.priorAttempts === undefined) {
    // A run started by signalWithStart (operator retry after an earlier run closed): continue from the store.
    const state = await local.loadDeliveryState(input.deliveryId);
    if (state.status === 'DELIVERED') {
      setStatus('DELIVERED');
      return { status, attemptCount: state.attemptCount, nextAttemptAt: null };
    }
    attemptCount = state.attemptCount;
    upsertSearchAttributes([
      { key: SA.endpointId, value: state.endpointId },
      { key: SA.merchantAccount, value: state.merchantAccount },
      { key: SA.eventType, value: state.eventType },
    ]);
    if (state.status === 'FAILED') await remote.reopenDelivery(input.deliveryId);
  }

  try {
    if (input.resume?.status === 'RETRYING') {
      // The durable timer of the attempt the dispatcher made, then the schedule goes on from the next index. P20: a
      // run started with that wait as its start delay is due when it begins (histories from before took a 1 ms timer).
      const due = (nextAttemptAt ?? 0) - Date.now();
      if (due <= 0 && patched(START_DELAYED_RETRY)) forced = retryRequested;
      else forced = await condition(() => retryRequested, Math.max(1, due));
      if (await runCycle(attemptCount)) return { status, attemptCount, nextAttemptAt: null };
    } else if (!input.resume && (await runCycle())) return { status, attemptCount, nextAttemptAt: null };
  } catch (error) {
    // R4: only a non-retryable failure (or exhausted retries) reaches here: record it as the reason for FAILED.
    if (!isActivityFailure(error)) throw error;
    reason = failureReason(error);
    await releaseSuccessor(await remote.failDelivery({ deliveryId: input.deliveryId, reason }));
  }

  setStatus('FAILED');
  nextAttemptAt = null;
  // O12: the delivery stays open for review; retryNow (Temporal UI, admin API, CLI) starts a new cycle.
  const retried = await condition(() => retryRequested, input.reviewWindowMs ?? DEFAULT_REVIEW_WINDOW_MS);
  if (!retried) return { status, attemptCount, nextAttemptAt: null, ...(reason === undefined ? {} : { reason }) };

  await remote.reopenDelivery(input.deliveryId);
  setStatus('PENDING');
  // A fresh run per cycle keeps the history bounded however often an operator retries.
  return continueAsNew<typeof deliveryWorkflow>({ ...input, resume: undefined, priorAttempts: attemptCount, reopened: true });
}
