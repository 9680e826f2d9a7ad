// Starts delivery workflows idempotently (O5, O6): workflow id = delivery id, and an existing or closed workflow
// with that id is the success case, not an error.
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { Profile } from '../config/profile.js';
import { deliveryWorkflowId } from '../shared/ids.js';
import { DELIVERY_WORKFLOW, type DeliveryWorkflowInput } from '../shared/outbound.js';
import { SA } from '../shared/search-attributes.js';
import { deliverySummary } from '../shared/workflow-summary.js';

export interface DeliveryToStart {
  deliveryId: string;
  endpointId: string;
  merchantAccount: string;
  eventType: string;
}

export interface StartOptions {
  temporal: Client;
  taskQueue: string;
  profile: Profile;
  /** Parallel StartWorkflowExecution calls per batch; one round trip each, so they overlap. */
  concurrency?: number;
  /** Eager start (the server hands the first workflow task straight to a worker in this process). */
  eager?: boolean;
  firstAttempt?: DeliveryWorkflowInput['firstAttempt'];
}

export function deliveryInput(profile: Profile, deliveryId: string, firstAttempt?: DeliveryWorkflowInput['firstAttempt']): DeliveryWorkflowInput {
  return {
    deliveryId,
    retryScheduleMs: profile.outbound.retry_schedule,
    priorAttempts: 0,
    reviewWindowMs: profile.outbound.review_window,
    ...(firstAttempt ? { firstAttempt } : {}),
  };
}

/** Resolves to how many workflows this call started (the rest already existed). Throws on any other error. */
export async function startDeliveryWorkflows(options: StartOptions, deliveries: DeliveryToStart[]): Promise<number> {
  let started = 0;
  let next = 0;
  const worker = async () => {
    while (next < deliveries.length) {
      const delivery = deliveries[next++]!;
      try {
        await options.temporal.workflow.start(DELIVERY_WORKFLOW, {
          taskQueue: options.taskQueue,
          workflowId: deliveryWorkflowId(delivery.deliveryId),
          args: [deliveryInput(options.profile, delivery.deliveryId, options.firstAttempt)],
          // A duplicate event must never restart a delivery whose workflow already closed (DELIVERED, or FAILED
          // past its review window); operator retries of closed ones go through signalWithStart instead.
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          staticSummary: deliverySummary({ ...delivery, note: 'attempt 1' }), // C5: readable in the Temporal UI list
          typedSearchAttributes: [
            { key: SA.deliveryStatus, value: 'PENDING' },
            { key: SA.endpointId, value: delivery.endpointId },
            { key: SA.merchantAccount, value: delivery.merchantAccount },
            { key: SA.eventType, value: delivery.eventType },
          ],
          requestEagerStart: options.eager,
        });
        started++;
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 32, deliveries.length) }, worker));
  return started;
}
