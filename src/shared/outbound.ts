// What the outbound side agrees on (dispatcher, worker, admin API, CLI): the delivery workflow's name, input,
// signal and query. The delivery id (whd_…) is the workflow id.
import { defineQuery, defineSignal } from '@temporalio/workflow';

export const DELIVERY_WORKFLOW = 'deliveryWorkflow';
/** R20: the failure type a delivery ends with when its start names a delivery it is not (no POST is made). */
export const DELIVERY_START_REFUSED = 'DeliveryStartRefused';

/** The one list of delivery statuses: the type, the pgEnum (src/db/schema) and the admin API's zod enum come from it. */
export const DELIVERY_STATUSES = ['PENDING', 'RETRYING', 'DELIVERED', 'FAILED'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** O13: an endpoint is attempted only while enabled (a deleted one is disabled too). */
export const ENDPOINT_STATUSES = ['enabled', 'disabled'] as const;
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number];

/** M3: `per_endpoint` delivers one event at a time to the endpoint, in the order the dispatcher fanned them out. */
export const ENDPOINT_ORDERINGS = ['none', 'per_endpoint'] as const;
export type EndpointOrdering = (typeof ENDPOINT_ORDERINGS)[number];

/** M11: where an endpoint's attempts go (src/outbound/destinations/ describes each). */
export const DESTINATION_TYPES = ['http', 'rabbitmq', 'kafka'] as const;
export type DestinationType = (typeof DESTINATION_TYPES)[number];

/** O16: how an endpoint's deliveries are signed: ApiPay-Signature (default) or Standard Webhooks. */
export const SIGNATURE_SCHEMES = ['apipay', 'standard'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

/** O12: how long a FAILED delivery waits for retryNow when the profile says nothing (outbound.review_window). */
export const DEFAULT_REVIEW_WINDOW_MS = 30 * 24 * 3600 * 1000;

export interface DeliveryWorkflowInput {
  deliveryId: string;
  /** O6: waits between attempts in ms, from the profile's retry_schedule ([1m, 5m, 30m, 2h, 12h]). */
  retryScheduleMs: number[];
  /**
   * Attempts already recorded for this delivery before this run (the dispatcher passes 0). When absent (a run
   * started by signalWithStart after an earlier run closed), the workflow reads the count from the store, so
   * attempt numbers keep increasing across runs and the attempt-once reservation (O7) stays unique.
   */
  priorAttempts?: number;
  /** O12: how long a FAILED delivery waits for retryNow before its workflow closes (profile review_window; default 30 days). */
  reviewWindowMs?: number;
  /** Set by the workflow itself when it continues as new for an operator's retry: the store is set back to PENDING first. */
  reopened?: boolean;
  /**
   * P1 (batched mode): the dispatcher already made the first `priorAttempts` attempts of this cycle and recorded the
   * outcome; the workflow continues from that status instead of attempting at once — the wait until `nextAttemptAt`
   * (RETRYING), or the review window (FAILED).
   */
  resume?: { status: 'RETRYING' | 'FAILED'; nextAttemptAt: number | null };
  /** The first attempt as a local activity (default, fewer round trips) or a regular one (bench comparison). */
  firstAttempt?: 'local' | 'activity';
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
  /** R4: set when the cycle ended FAILED by a non-retryable error (e.g. no signing secret) rather than by attempts. */
  reason?: string;
}

/** M3: sent by the previous delivery to an ordered endpoint when it is DELIVERED or FAILED, or by an operator's skip. */
export const orderReleasedSignal = defineSignal('orderReleased');

/** P15: sent by the endpoint's probe to a retry it parked: the circuit let it go, attempt now without parking again. */
export const parkReleasedSignal = defineSignal('parkReleased');

export const deliveryStatusQuery = defineQuery<DeliveryProgress>('status');
