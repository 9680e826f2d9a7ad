// The one way to start a reconciliation workflow (ingress, sweep, drill): id from provider + event id (I6), the
// ingress's fields alone in the input (R20: the run takes the rules and the profile's settings from its worker, and
// checks the rest against the receipt), search attributes set from the first moment. reconciliationSettings is what
// the worker's first step answers.
import type { WorkflowStartOptions } from '@temporalio/client';
import type { Profile } from '../config/profile.js';
import { reconciliationWorkflowId } from '../shared/ids.js';
import {
  RECONCILIATION_WORKFLOW,
  type ReconciliationInput,
  type ReconciliationSettings,
  type ReconciliationWorkflowInput,
} from '../shared/inbound.js';
import { SA } from '../shared/search-attributes.js';
import { reconciliationSummary } from '../shared/workflow-summary.js';
import { minorToDecimal } from './csv.js';
import { loadReconciliationRules } from './load-rules.js';

export function reconciliationSettings(profile: Profile): ReconciliationSettings {
  const inbound = profile.inbound;
  return {
    timeoutMs: inbound.reconciliation_timeout,
    backoff: {
      initialMs: inbound.provider_query_backoff.initial,
      multiplier: inbound.provider_query_backoff.multiplier,
      maximumMs: inbound.provider_query_backoff.maximum,
    },
    allowProvisionalAccess: inbound.allow_provisional_access,
    // The run only needs to know whether the Temporal path is open; who may use it is the activity's question (A31).
    resolutionViaTemporal: inbound.resolution_via_temporal === 'deny' ? 'deny' : 'allow',
  };
}

/** R20: only what the ingress knows (the receipt's event, its id, the acknowledgement); nothing the run would trust. */
export function buildReconciliationInput(input: ReconciliationInput): ReconciliationWorkflowInput {
  const { provider, receiptId, event, acknowledgedAt } = input;
  return { provider, receiptId, event, acknowledgedAt };
}

/**
 * Everything `client.workflow.start` needs:
 *   await client.workflow.start(RECONCILIATION_WORKFLOW, buildReconciliationStart(input, taskQueues.reconciliation))
 * A second start of the same event fails with WorkflowExecutionAlreadyStartedError, which callers treat as done.
 */
export function buildReconciliationStart(
  input: ReconciliationInput,
  taskQueue: string,
): WorkflowStartOptions<(input: ReconciliationWorkflowInput) => Promise<unknown>> & { workflowId: string } {
  const args = buildReconciliationInput(input);
  return {
    workflowId: reconciliationWorkflowId(input.provider, input.event.providerEventId),
    taskQueue,
    args: [args],
    // C5: what an operator reads in the Temporal UI's list.
    staticSummary: reconciliationSummary({
      currency: input.event.currency,
      amount: minorToDecimal(input.event.amountMinor, input.event.currency),
      paymentReference: input.event.paymentReference,
      provider: input.provider,
      eventType: input.event.type,
    }),
    typedSearchAttributes: [
      { key: SA.reconciliationState, value: loadReconciliationRules().initial },
      { key: SA.provider, value: input.provider },
      // O20: find every reconciliation of one payment in the Temporal UI.
      ...(input.event.paymentReference ? [{ key: SA.paymentReference, value: input.event.paymentReference }] : []),
    ],
  };
}

export { RECONCILIATION_WORKFLOW };
