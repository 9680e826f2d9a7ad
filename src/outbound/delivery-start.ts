// The one place that decides how a delivery workflow starts (O5, O6, O12), for every caller (the dispatcher's
// fan-out and hand-off, the endpoint test event, an operator's retry), as src/inbound/start.ts does for
// reconciliations: its input, its id (= delivery id) and its id-reuse policy. A start is idempotent: an existing or
// closed workflow with that id is the success case, not an error. R18: each start runs under its event's kept
// traceparent, so the delivery workflow joins the payment's trace.
import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { Profile } from '../config/profile.js';
import type { Db } from '../db/client.js';
import { createFirstAttemptStore } from './first-attempt-store.js';
import { deliveryWorkflowId } from '../shared/ids.js';
import {
  DELIVERY_WORKFLOW,
  parkReleasedSignal,
  type DeliveryStatus,
  type DeliveryWorkflowInput,
  type EndpointStatus,
} from '../shared/outbound.js';
import { SA } from '../shared/search-attributes.js';
import { deliverySummary } from '../shared/workflow-summary.js';
import { context, contextFrom } from '../tracing/context.js';

export interface DeliveryToStart {
  deliveryId: string;
  endpointId: string;
  merchantAccount: string;
  eventType: string;
  /** O20: the PaymentReference search attribute, when the event names a payment. */
  paymentReference?: string;
  /**
   * P1: attempts the batched dispatcher already made (set, even to 0, only for deliveries it owned); the workflow
   * continues from `resume` (see DeliveryWorkflowInput).
   */
  priorAttempts?: number;
  resume?: DeliveryWorkflowInput['resume'];
  /** P1: set by a batched fan-out — the dispatcher owns this delivery until it is DELIVERED or has a workflow. */
  handoff?: Handoff;
  /** R18: the event's traceparent (the dispatcher's consumer span), null when tracing was off. */
  traceparent?: string | null;
}

/** P1: a delivery the batched dispatcher (or P13's release) owns and may send itself: its row and what it sends. */
export type Owned = DeliveryToStart & { handoff: Handoff };

/** What the batched dispatcher knows of a delivery it owns: its row, and what its first attempt would send. */
export interface Handoff {
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
  body: Buffer;
  url: string;
  endpointStatus: EndpointStatus;
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

/**
 * A new delivery never restarts a workflow that already closed (DELIVERED, or FAILED past its review window); an
 * operator's retry may follow any closed run (completed, failed, terminated) and only signals a running one.
 */
export const NEW_DELIVERY_REUSE = WorkflowIdReusePolicy.REJECT_DUPLICATE;
export const RETRY_REUSE = WorkflowIdReusePolicy.ALLOW_DUPLICATE;

/**
 * The input of a run an operator's retry starts after the previous one closed: priorAttempts is left out on
 * purpose, so the new run reads the attempt count from the store and attempt numbers keep increasing across runs.
 */
export function retryInput(deliveryId: string, retryScheduleMs: number[], reviewWindowMs?: number): DeliveryWorkflowInput {
  return { deliveryId, retryScheduleMs, ...(reviewWindowMs !== undefined ? { reviewWindowMs } : {}) };
}

export function deliveryInput(
  profile: Profile,
  deliveryId: string,
  firstAttempt?: DeliveryWorkflowInput['firstAttempt'],
  resume?: Pick<DeliveryToStart, 'priorAttempts' | 'resume'>,
): DeliveryWorkflowInput {
  return {
    deliveryId,
    retryScheduleMs: profile.outbound.retry_schedule,
    priorAttempts: resume?.priorAttempts ?? 0,
    reviewWindowMs: profile.outbound.review_window,
    ...(firstAttempt ? { firstAttempt } : {}),
    ...(resume?.resume ? { resume: resume.resume } : {}),
  };
}

/** P1: the workflow a delivery the batched dispatcher owns needs, from its row: attempt 1, or go on after it. */
export function fromRow(
  delivery: DeliveryToStart,
  row: Pick<Handoff, 'status' | 'attemptCount' | 'nextAttemptAt'>,
): DeliveryToStart {
  if (row.status !== 'RETRYING' && row.status !== 'FAILED') return { ...delivery, handoff: undefined, priorAttempts: 0 };
  return {
    ...delivery,
    handoff: undefined,
    priorAttempts: row.attemptCount,
    resume: { status: row.status, nextAttemptAt: row.status === 'RETRYING' ? (row.nextAttemptAt?.getTime() ?? 0) : null },
  };
}

/**
 * P20: a run that resumes a RETRYING row starts with its first wait as Temporal's start delay (the execution's
 * first-workflow-task backoff, as durable as a timer): nothing runs on a worker until the retry is due, and the run's
 * history holds one event meanwhile. A signalWithStart (an operator's retry, the probe's release) ends the delay at
 * once; a plain signal waits for it. Below `MIN_START_DELAY_MS` the run starts now and waits in its timer.
 */
export const MIN_START_DELAY_MS = 1_000;
export function startDelayOf(delivery: Pick<DeliveryToStart, 'resume'>, now: number): number | null {
  const at = delivery.resume?.status === 'RETRYING' ? delivery.resume.nextAttemptAt : null;
  return at !== null && at !== undefined && at - now >= MIN_START_DELAY_MS ? Math.ceil(at - now) : null;
}

/** Resolves to how many workflows this call started (the rest already existed). Throws on any other error. */
export async function startDeliveryWorkflows(options: StartOptions, deliveries: DeliveryToStart[]): Promise<number> {
  let started = 0;
  let next = 0;
  const worker = async () => {
    while (next < deliveries.length) {
      const delivery = deliveries[next++]!;
      const delayMs = startDelayOf(delivery, Date.now());
      try {
        await context.with(contextFrom(delivery.traceparent), () =>
          options.temporal.workflow.start(DELIVERY_WORKFLOW, {
            taskQueue: options.taskQueue,
            workflowId: deliveryWorkflowId(delivery.deliveryId),
            args: [deliveryInput(options.profile, delivery.deliveryId, options.firstAttempt, delivery)],
            // A duplicate event must never restart a closed delivery; operator retries go through signalWithStart.
            workflowIdReusePolicy: NEW_DELIVERY_REUSE,
            // C5: readable in the Temporal UI list
            staticSummary: deliverySummary({ ...delivery, note: `attempt ${(delivery.priorAttempts ?? 0) + 1}` }),
            typedSearchAttributes: [
              { key: SA.deliveryStatus, value: delivery.resume?.status ?? 'PENDING' },
              { key: SA.endpointId, value: delivery.endpointId },
              { key: SA.merchantAccount, value: delivery.merchantAccount },
              { key: SA.eventType, value: delivery.eventType },
              ...(delivery.paymentReference ? [{ key: SA.paymentReference, value: delivery.paymentReference }] : []),
            ],
            // A delayed start is never eager: no workflow task is due until the delay ends.
            ...(delayMs === null ? { requestEagerStart: options.eager } : { startDelay: delayMs }),
          }),
        );
        started++;
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 32, deliveries.length) }, worker));
  return started;
}

/**
 * Starts the deliveries' workflows (one that exists counts as started, O5), then clears their hand-off marker; a
 * delivery the batched mode still owns goes on from its row (fromRow). Also the per-delivery mode's path for rows a
 * batched dispatcher left behind, so switching modes loses nothing.
 */
export async function handOff(db: Db, start: StartOptions, deliveries: DeliveryToStart[]): Promise<number> {
  if (deliveries.length === 0) return 0;
  const workflows = deliveries.map((d) => (d.handoff ? fromRow(d, d.handoff) : d));
  const started = await startDeliveryWorkflows(start, workflows);
  const owned = workflows.filter((d) => d.priorAttempts !== undefined).map((d) => d.deliveryId);
  if (owned.length) await createFirstAttemptStore(db).handedOff(owned);
  return started;
}

/**
 * P15: releases retries their workflows parked (src/outbound/retry-parking.ts): each waiting workflow gets
 * parkReleased and attempts at once. One that is not running (terminated, lost) is started again from the row, as an
 * operator's retry would (ALLOW_DUPLICATE): RETRYING after `attemptCount` attempts, due now. Resolves to how many.
 */
export async function releaseParkedRetries(
  options: StartOptions,
  retries: (Pick<DeliveryToStart, 'deliveryId' | 'endpointId' | 'merchantAccount' | 'eventType'> & { attemptCount: number })[],
): Promise<number> {
  await Promise.all(
    retries.map((r) =>
      options.temporal.workflow.signalWithStart(DELIVERY_WORKFLOW, {
        taskQueue: options.taskQueue,
        workflowId: deliveryWorkflowId(r.deliveryId),
        args: [
          deliveryInput(options.profile, r.deliveryId, undefined, {
            priorAttempts: r.attemptCount,
            resume: { status: 'RETRYING', nextAttemptAt: 0 },
          }),
        ],
        signal: parkReleasedSignal,
        signalArgs: [],
        workflowIdReusePolicy: RETRY_REUSE,
        staticSummary: deliverySummary({ ...r, note: 'released from the circuit' }),
        typedSearchAttributes: [
          { key: SA.deliveryStatus, value: 'RETRYING' },
          { key: SA.endpointId, value: r.endpointId },
          { key: SA.merchantAccount, value: r.merchantAccount },
          { key: SA.eventType, value: r.eventType },
        ],
      }),
    ),
  );
  return retries.length;
}
