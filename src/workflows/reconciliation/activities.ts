// The reconciliation's activities, proxied once with the retry policy each kind of step needs.
import { patched, proxyActivities, proxyLocalActivities, type ActivityOptions } from '@temporalio/workflow';
import type { ReconciliationActivities as Steps } from '../../activities/reconciliation.js';
import type { ReconciliationTrustActivities } from '../../activities/reconciliation-trust.js';
import type { createLedgerPositionActivities } from '../../activities/ledger-position.js';
import type { createResolutionActivities } from '../../activities/resolution.js';
import { NON_RETRYABLE_ERROR_TYPES } from '../../shared/failures.js';
import { LOCAL_STEPS } from '../patches.js';

/** R20: the start's check and the continuation's seal run beside the other steps. */
type ReconciliationActivities = Steps & ReconciliationTrustActivities;

// Recording and ledger writes are idempotent: retry them until they land, except deterministic failures (R4,
// src/lib/errors.ts), which a ledger posting turns into manual_review with the reason.
const UNTIL_IT_LANDS: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_TYPES],
  },
};

/**
 * P3: the steps of a reconciliation (record a transition, ask the provider, post, check the ledger) run as local
 * activities inside the workflow task that reaches them, so a reconciliation costs the Temporal server about one
 * workflow task instead of one activity task and one workflow task per step (docs/benchmarks.md, the inbound drain).
 * Every step is idempotent or read-only, so the re-run of a workflow task after a worker crash is safe. Behind a
 * patch: histories recorded before it replay their regular activities (test/fixtures/histories/pre-p3/).
 */
function localOnceLanded<T extends object>(local: T, remote: T): T {
  return new Proxy(remote, { get: (_target, name) => Reflect.get(patched(LOCAL_STEPS) ? local : remote, name) });
}

export const store = localOnceLanded(
  proxyLocalActivities<ReconciliationActivities>(UNTIL_IT_LANDS),
  proxyActivities<ReconciliationActivities>(UNTIL_IT_LANDS),
);

// L5: the ledger's side of a payment and an operator's settlement correction; the same retries as `store`.
export const ledger = localOnceLanded(
  proxyLocalActivities<ReturnType<typeof createLedgerPositionActivities>>(UNTIL_IT_LANDS),
  proxyActivities<ReturnType<typeof createLedgerPositionActivities>>(UNTIL_IT_LANDS),
);

// R2: one transaction that answers "committed" or "refused"; only infrastructure errors throw, and those are
// retried a bounded number of times (all or nothing, so a retry is safe), then reported like a refusal.
export const resolutions = proxyActivities<ReturnType<typeof createResolutionActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5 },
});

// One try per query: the workflow's own loop retries with the profile's backoff and owns the timeout (I8).
const ONE_TRY: ActivityOptions = { startToCloseTimeout: '20 seconds', retry: { maximumAttempts: 1 } };
export const provider = localOnceLanded(
  proxyLocalActivities<ReconciliationActivities>(ONE_TRY),
  proxyActivities<ReconciliationActivities>(ONE_TRY),
);
