// O12: an operator's retry reaches the delivery workflow: a running one gets retryNow (next attempt now);
// a closed one (review window over) is started again under the same workflow id and attempts at once
// (its input and reuse policy are delivery-start.ts's).
import type { Client } from '@temporalio/client';
import { deliveryWorkflowId } from '../shared/ids.js';
import { DELIVERY_WORKFLOW, retryNowSignal, type RetryRequest } from '../shared/outbound.js';
import { deliverySummary } from '../shared/workflow-summary.js';
import { retryInput, RETRY_REUSE } from './delivery-start.js';

export interface DeliveryRetryOptions {
  client: Client;
  taskQueue: string;
  deliveryId: string;
  retryScheduleMs: number[];
  /** Profile outbound.review_window, passed on to a new run. */
  reviewWindowMs?: number;
  request: RetryRequest;
  /** Named in the summary the Temporal UI list shows for a new run (C5). */
  endpointId?: string;
}

/** Returns the run id that received the signal (a new one when the previous run had closed). */
export async function requestDeliveryRetry(options: DeliveryRetryOptions): Promise<{ runId: string }> {
  const input = retryInput(options.deliveryId, options.retryScheduleMs, options.reviewWindowMs);
  const handle = await options.client.workflow.signalWithStart(DELIVERY_WORKFLOW, {
    workflowId: deliveryWorkflowId(options.deliveryId),
    taskQueue: options.taskQueue,
    args: [input],
    signal: retryNowSignal,
    signalArgs: [options.request],
    workflowIdReusePolicy: RETRY_REUSE,
    // C5: applies when this starts a new run (a running one keeps the summary it was started with).
    staticSummary: deliverySummary({
      deliveryId: options.deliveryId,
      ...(options.endpointId ? { endpointId: options.endpointId } : {}),
      note: 'operator retry',
    }),
  });
  return { runId: handle.signaledRunId };
}
