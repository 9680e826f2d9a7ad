// The one way to start a reconciliation workflow (ingress, sweep, drill): id from provider + event id (I6), the
// rules from the YAML and the profile's settings in the input, search attributes set from the first moment.
import type { WorkflowStartOptions } from '@temporalio/client';
import type { Profile } from '../config/profile.js';
import { reconciliationWorkflowId } from '../shared/ids.js';
import {
  RECONCILIATION_WORKFLOW,
  type ReconciliationInput,
  type ReconciliationRules,
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
    resolutionViaTemporal: inbound.resolution_via_temporal,
  };
}

export function buildReconciliationInput(
  profile: Profile,
  input: ReconciliationInput,
  rules: ReconciliationRules = loadReconciliationRules(),
): ReconciliationWorkflowInput {
  return { ...input, rules, settings: reconciliationSettings(profile) };
}

/**
 * Everything `client.workflow.start` needs:
 *   await client.workflow.start(RECONCILIATION_WORKFLOW, buildReconciliationStart(profile, input, taskQueues.reconciliation))
 * A second start of the same event fails with WorkflowExecutionAlreadyStartedError, which callers treat as done.
 */
export function buildReconciliationStart(
  profile: Profile,
  input: ReconciliationInput,
  taskQueue: string,
  rules?: ReconciliationRules,
): WorkflowStartOptions<(input: ReconciliationWorkflowInput) => Promise<unknown>> & { workflowId: string } {
  const args = buildReconciliationInput(profile, input, rules);
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
      { key: SA.reconciliationState, value: args.rules.initial },
      { key: SA.provider, value: input.provider },
      // O20: find every reconciliation of one payment in the Temporal UI.
      ...(input.event.paymentReference ? [{ key: SA.paymentReference, value: input.event.paymentReference }] : []),
    ],
  };
}

export { RECONCILIATION_WORKFLOW };
