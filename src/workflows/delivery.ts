// O6/O12: one delivery's cycle — attempt at once, durable backoff timers from the profile, FAILED after the last
// retry, then a review window in which an operator's retryNow starts a new cycle.
import {
  condition,
  continueAsNew,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
  type ActivityOptions,
} from '@temporalio/workflow';
import type { AttemptResult, DeliveryActivities } from '../activities/delivery.js';
import {
  DEFAULT_REVIEW_WINDOW_MS,
  deliveryStatusQuery,
  retryNowSignal,
  type DeliveryProgress,
  type DeliveryStatus,
  type DeliveryWorkflowInput,
} from '../shared/outbound.js';
import { failureReason, isActivityFailure, NON_RETRYABLE_ERROR_TYPES } from '../shared/failures.js';
import { SA } from '../shared/search-attributes.js';

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

export async function deliveryWorkflow(input: DeliveryWorkflowInput): Promise<DeliveryProgress> {
  // P1: a run the batched dispatcher started after its first attempt failed begins in that attempt's status (the
  // start set the DeliveryStatus search attribute to it).
  let status: DeliveryStatus = input.resume?.status ?? 'PENDING';
  let attemptCount = input.priorAttempts ?? 0;
  let nextAttemptAt: number | null = input.resume?.nextAttemptAt ?? null;
  let retryRequested = false;
  let reason: string | undefined; // R4: why the cycle ended FAILED without a merchant answer

  setHandler(retryNowSignal, () => {
    retryRequested = true;
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

  /** The attempts of one cycle: true when delivered, false when the schedule is exhausted (→ FAILED). */
  async function runCycle(from = 0): Promise<boolean> {
    const schedule = input.retryScheduleMs;
    for (let index = from; index <= schedule.length; index++) {
      const retryInMs = index < schedule.length ? schedule[index]! : null;
      retryRequested = false; // a retryNow that arrives during this attempt asks for the next one at once
      const attempt = index === 0 && input.firstAttempt !== 'activity' ? local.attemptDelivery : remote.attemptDelivery;
      const result: AttemptResult = await attempt({
        deliveryId: input.deliveryId,
        attemptNumber: attemptCount + 1,
        // Workflow time: the activity computes next_attempt_at and the O13 failure streak from it, so both follow
        // the durable timers (and time skipping in tests) rather than the activity's wall clock.
        scheduledAt: Date.now(),
        retryInMs,
      });
      attemptCount = result.attemptNumber;
      if (result.outcome === 'delivered') {
        setStatus('DELIVERED');
        nextAttemptAt = null;
        return true;
      }
      if (retryInMs === null || result.stopRetrying) break;
      setStatus('RETRYING');
      nextAttemptAt = Date.now() + retryInMs;
      await condition(() => retryRequested, retryInMs);
    }
    return false;
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
      // The durable timer of the attempt the dispatcher made, then the schedule goes on from the next index.
      await condition(() => retryRequested, Math.max(1, (nextAttemptAt ?? 0) - Date.now()));
      if (await runCycle(attemptCount)) return { status, attemptCount, nextAttemptAt: null };
    } else if (!input.resume && (await runCycle())) return { status, attemptCount, nextAttemptAt: null };
  } catch (error) {
    // R4: only a non-retryable failure (or exhausted retries) reaches here: record it as the reason for FAILED.
    if (!isActivityFailure(error)) throw error;
    reason = failureReason(error);
    await remote.failDelivery({ deliveryId: input.deliveryId, reason });
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
