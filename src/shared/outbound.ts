// What the outbound side agrees on (dispatcher, worker, admin API, CLI): the delivery workflow's name, input,
// signal and query. The delivery id (whd_…) is the workflow id.
import { defineQuery, defineSignal } from '@temporalio/workflow';

export const DELIVERY_WORKFLOW = 'deliveryWorkflow';

export type DeliveryStatus = 'PENDING' | 'RETRYING' | 'DELIVERED' | 'FAILED';

export interface DeliveryWorkflowInput {
  deliveryId: string;
  /** O6: waits between attempts in ms, from the profile's retry_schedule ([1m, 5m, 30m, 2h, 12h]). */
  retryScheduleMs: number[];
}

export interface RetryRequest {
  operator?: string;
  reason?: string;
}

/** O12: an operator asks for the next attempt now (Temporal UI: Signal → retryNow), also on a FAILED delivery. */
export const retryNowSignal = defineSignal<[RetryRequest]>('retryNow');

export interface DeliveryProgress {
  status: DeliveryStatus;
  attemptCount: number;
  /** ISO 8601, null when no attempt is scheduled. */
  nextAttemptAt: string | null;
}

export const deliveryStatusQuery = defineQuery<DeliveryProgress>('status');
