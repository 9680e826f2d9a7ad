// One reconciliation per provider event (I6–I12): ask the provider (authoritative), post to the ledger when
// confirmed and matching, park conflicts and timeouts in manual_review for an audited operator resolution.
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  log,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ReconciliationActivities, LedgerPostingResult } from '../activities/reconciliation.js';
import type { createLedgerPositionActivities } from '../activities/ledger-position.js';
import type { createResolutionActivities } from '../activities/resolution.js';
import { postingOutcome } from '../inbound/posting-outcome.js';
import { assertTransition, IllegalTransitionError, ILLEGAL_TRANSITION } from '../inbound/state-machine.js';
import { discrepancyReason, judge, postingKindFor, settlementDiscrepancy, type Discrepancy, type ItemMatch, type Verdict } from '../inbound/verdict.js';
import type { PostingKind } from '../ledger/postings.js';
import {
  operatorResolutionSignal,
  reconciliationStateQuery,
  resolveUpdate,
  type OperatorResolution,
  type ProviderPayment,
  type ReconciliationProgress,
  type ReconciliationState,
  type ReconciliationWorkflowInput,
  type ResolutionAnswer,
} from '../shared/inbound.js';
import { failureReason, failureText, failureType, isActivityFailure, NON_RETRYABLE_ERROR_TYPES } from '../shared/failures.js';
import { OPERATOR_MAX, resolutionInputProblem, textProblem } from '../shared/operator-input.js';
import { SA } from '../shared/search-attributes.js';

// Recording and ledger writes are idempotent: retry them until they land, except deterministic failures (R4,
// src/lib/errors.ts), which a ledger posting turns into manual_review with the reason.
const store = proxyActivities<ReconciliationActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_TYPES],
  },
});

// L5: the ledger's side of a payment and an operator's settlement correction; the same retries as `store`.
const ledger = proxyActivities<ReturnType<typeof createLedgerPositionActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', nonRetryableErrorTypes: [...NON_RETRYABLE_ERROR_TYPES] },
});

// R2: one transaction that answers "committed" or "refused"; only infrastructure errors throw, and those are
// retried a bounded number of times (all or nothing, so a retry is safe), then reported like a refusal.
const resolutions = proxyActivities<ReturnType<typeof createResolutionActivities>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5 },
});

/** Patch id of the one-transaction resolution (R2); histories from before it replay the old three steps. */
export const ONE_TRANSACTION_RESOLUTION = 'resolution-one-transaction';
const MAX_REFUSALS_KEPT = 20;

// One try per query: the workflow's own loop retries with the profile's backoff and owns the timeout (I8).
const provider = proxyActivities<ReconciliationActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { maximumAttempts: 1 },
});

export interface ReconciliationOutcome {
  state: ReconciliationState;
  reason: string | null;
  ledgerTransactionId: string | null;
  auditId: string | null;
}

function resolutionProblem(resolution: OperatorResolution, state: ReconciliationState, pending: boolean): string | null {
  if (state !== 'manual_review') return `not in manual_review (state ${state})`;
  if (pending) return 'already resolved';
  return resolutionInputProblem(resolution);
}

export async function reconciliationWorkflow(input: ReconciliationWorkflowInput): Promise<ReconciliationOutcome> {
  const { rules, settings, event } = input;
  const reconciliationId = workflowInfo().workflowId;
  const postingKind = postingKindFor(event.type);

  const continued = input.continued;
  let state: ReconciliationState = continued ? 'reconciling' : rules.initial;
  let reason: string | null = null;
  let providerQueries = continued?.providerQueries ?? 0;
  let ledgerTransactionId: string | null = null;
  let providerPayment: ProviderPayment | null = continued?.providerPayment ?? null;
  // L1: the provider objects the last verdict matched (for an operator's applied); L5: the discrepancy found.
  let match: ItemMatch | undefined;
  let discrepancy: Discrepancy | null = null;
  let pendingResolution: OperatorResolution | undefined;
  let resolutionOutcome: ResolutionAnswer | { error: string } | undefined;
  let pendingVia: 'signal' | 'update' = 'update';
  const refusedResolutions: NonNullable<ReconciliationProgress['refusedResolutions']> = [];
  /** R2: every refused resolution is visible in the state query; a signal's is never retried. */
  const refuse = (resolution: OperatorResolution | undefined, problem: string, via: 'signal' | 'update') => {
    const operator = textProblem(resolution?.operator, OPERATOR_MAX) === null ? (resolution!.operator as string).trim() : null;
    refusedResolutions.push({ operator, problem, via });
    if (refusedResolutions.length > MAX_REFUSALS_KEPT) refusedResolutions.shift();
    log.warn('operator resolution refused', { problem, via });
  };

  const accept = (resolution: OperatorResolution, via: 'signal' | 'update') => {
    resolutionOutcome = undefined;
    pendingResolution = resolution;
    pendingVia = via;
  };
  setHandler(reconciliationStateQuery, (): ReconciliationProgress => ({ state, reason, providerQueries, ledgerTransactionId, refusedResolutions: [...refusedResolutions] }));
  // A signal cannot answer, so an invalid or late one is recorded as refused (state query); the update refuses it instead.
  setHandler(operatorResolutionSignal, (resolution) => {
    const problem = resolutionProblem(resolution, state, pendingResolution !== undefined);
    if (problem) refuse(resolution, problem, 'signal');
    else accept(resolution, 'signal');
  });
  setHandler(
    resolveUpdate,
    async (resolution) => {
      accept(resolution, 'update');
      await condition(() => resolutionOutcome !== undefined);
      const outcome = resolutionOutcome!;
      if ('error' in outcome) {
        resolutionOutcome = undefined;
        throw ApplicationFailure.create({ type: 'ResolutionFailed', message: outcome.error, nonRetryable: true });
      }
      return outcome;
    },
    {
      validator: (resolution) => {
        const problem = resolutionProblem(resolution, state, pendingResolution !== undefined);
        if (problem) throw new Error(problem);
      },
    },
  );

  /** Checked before any side effect of the transition (a ledger posting), and again when it is made. */
  function ensureAllowed(to: ReconciliationState, actor: 'system' | `operator:${string}`): void {
    try {
      assertTransition(rules, state, to, actor === 'system' ? 'system' : 'operator');
    } catch (error) {
      if (error instanceof IllegalTransitionError) {
        throw ApplicationFailure.create({ type: ILLEGAL_TRANSITION, message: error.message, nonRetryable: true });
      }
      throw error;
    }
  }

  async function transition(to: ReconciliationState, actor: 'system' | `operator:${string}`, why: string | null): Promise<void> {
    ensureAllowed(to, actor);
    await store.recordReconciliationTransition({ ...projection(), from: state, to, actor, reason: why });
    state = to;
    reason = why;
    upsertSearchAttributes([{ key: SA.reconciliationState, value: to }]);
  }

  const projection = () => ({
    reconciliationId,
    provider: input.provider,
    event,
    acknowledgedAt: input.acknowledgedAt,
    providerPayment: providerPayment && { amountMinor: providerPayment.amountMinor, currency: providerPayment.currency },
    ledgerTransactionId,
    discrepancy,
  });

  const post = (kind: PostingKind, actor: string): Promise<LedgerPostingResult> =>
    store.postLedgerTransaction({ kind, provider: input.provider, reconciliationId, event, acknowledgedAt: input.acknowledgedAt, actor, ...(match ? { match } : {}) });

  upsertSearchAttributes([
    { key: SA.reconciliationState, value: state },
    { key: SA.provider, value: input.provider },
  ]);
  if (!continued) {
    await store.recordReconciliationTransition({ ...projection(), from: null, to: state, actor: 'system', reason: null });
    await transition('reconciling', 'system', null);
  }

  // I12: provisional credit exists only when the profile allows it: its own accounts, released at the end.
  let provisionalPosted = continued?.provisionalPosted ?? false;
  // The timeout runs from the acknowledgement (the time the event has waited for an answer), not from a start
  // that a loaded worker or the sweep may have delayed; every reconciliation still queries the provider once.
  const acknowledged = Date.parse(input.acknowledgedAt);
  const deadline = continued?.deadline ?? (Number.isFinite(acknowledged) ? Math.min(acknowledged, Date.now()) : Date.now()) + settings.timeoutMs;
  let delay = continued?.delayMs ?? settings.backoff.initialMs;
  const queriesPerRun = input.queriesPerRun ?? 500;
  let queriesThisRun = 0;
  let verdict: Verdict;
  for (;;) {
    providerQueries += 1;
    try {
      const answer = await provider.queryProviderPayment({ provider: input.provider, paymentReference: event.paymentReference });
      if (answer.outcome === 'error') {
        verdict = { kind: 'unknown', reason: `provider_error: ${answer.message}` };
      } else {
        if (answer.outcome === 'found') providerPayment = answer.payment;
        verdict = judge(event, answer.outcome === 'found' ? answer.payment : null);
      }
    } catch (error) {
      verdict = { kind: 'unknown', reason: `provider_error: ${failureText(error)}` };
    }
    match = verdict.kind === 'confirmed' ? verdict.match : undefined;
    if (verdict.kind === 'confirmed' && postingKind) {
      ensureAllowed('applied', 'system');
      try {
        const outcome = postingOutcome(await post(postingKind, 'system'), postingKind, event);
        if (outcome.kind === 'posted') ledgerTransactionId = outcome.transactionId;
        else verdict = outcome.verdict;
      } catch (error) {
        // Domain refusals of the ledger are errors a person must look at, never a silent success.
        const type = failureType(error);
        if (type === 'ReversalExceedsSettledError') verdict = { kind: 'conflict', reason: `reversal_exceeds_settled: ${failureText(error)}` };
        else if (type === 'LedgerConflictError') verdict = { kind: 'conflict', reason: `ledger_conflict: ${failureText(error)}` };
        // R4: any other final failure (an amount of 0, data the database refuses) is parked, not retried.
        else if (isActivityFailure(error)) verdict = { kind: 'conflict', reason: `ledger_refused: ${failureReason(error)}` };
        else throw error;
      }
    }
    if (verdict.kind !== 'unknown') break;
    reason = verdict.reason;
    if (settings.allowProvisionalAccess && postingKind === 'payment' && !provisionalPosted) {
      try {
        await post('provisional', 'system');
        provisionalPosted = true;
      } catch (error) {
        if (!isActivityFailure(error)) throw error;
        verdict = { kind: 'conflict', reason: `ledger_refused: ${failureReason(error)}` };
        break;
      }
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      verdict = { kind: 'conflict', reason: `timeout: no authoritative answer within ${settings.timeoutMs} ms (last: ${verdict.reason})` };
      break;
    }
    await sleep(Math.min(delay, left));
    delay = Math.min(delay * settings.backoff.multiplier, settings.backoff.maximumMs);
    queriesThisRun += 1;
    // A long timeout with a short backoff cap would grow the history without bound: carry the loop to a new run.
    if (queriesThisRun >= queriesPerRun || workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof reconciliationWorkflow>({
        ...input,
        continued: { deadline, delayMs: delay, providerQueries, provisionalPosted, providerPayment },
      });
    }
  }
  if (provisionalPosted) await post('provisional_release', 'system');

  // L5: a payment-level event the provider now contradicts (failed, lower amount) after the ledger credited the
  // payment reverts nothing: it becomes a review item with both sides kept on the reconciliation. Behind a patch:
  // executions that passed this point before it existed did not ask the ledger (docs/workflow-versioning.md).
  const answered = verdict.kind === 'declined' || (verdict.kind === 'conflict' && !verdict.reason.startsWith('timeout'));
  if (answered && (postingKind === 'payment' || postingKind === null) && providerPayment && patched('l5-settlement-discrepancy')) {
    discrepancy = settlementDiscrepancy(providerPayment, await ledger.ledgerPosition({ provider: input.provider, paymentReference: event.paymentReference }));
    // L3: a capture refused because an operator's posting holds the key keeps naming that posting.
    const inTheWay = verdict.kind === 'conflict' && verdict.reason.startsWith('ledger_conflict') ? ` (${verdict.reason})` : '';
    if (discrepancy) verdict = { kind: 'conflict', reason: `${discrepancyReason(discrepancy)}${inTheWay}` };
  }

  switch (verdict.kind) {
    case 'confirmed':
      await transition('applied', 'system', verdict.reason);
      return { state, reason, ledgerTransactionId, auditId: null };
    case 'declined':
    case 'stale':
      await transition('rejected', 'system', verdict.reason);
      return { state, reason, ledgerTransactionId, auditId: null };
    default:
      await transition('manual_review', 'system', verdict.reason);
  }

  // I11: only an operator leaves manual_review, and every resolution leaves one audit row.
  for (;;) {
    await condition(() => pendingResolution !== undefined);
    const resolution = pendingResolution!;
    const actor = `operator:${resolution.operator.trim()}` as const;
    const to = resolution.decision === 'rejected' ? 'rejected' : 'applied';
    ensureAllowed(to, actor);
    if (!patched(ONE_TRANSACTION_RESOLUTION)) {
      const legacy = await legacyResolve(resolution, actor);
      if (legacy) return legacy;
      continue;
    }
    let result: Awaited<ReturnType<typeof resolutions.commitOperatorResolution>>;
    try {
      result = await resolutions.commitOperatorResolution({
        reconciliationId,
        provider: input.provider,
        event,
        postingKind,
        providerPayment: providerPayment && {
          amountMinor: providerPayment.amountMinor,
          currency: providerPayment.currency,
          refunds: providerPayment.refunds,
          disputes: providerPayment.disputes,
          reversals: providerPayment.reversals,
        },
        resolution,
        previousState: state,
        discrepancy,
      });
    } catch (error) {
      // Retries exhausted: nothing was written (one transaction), so the operator may simply try again.
      // Only the failure's type: a database error's message may quote the operator's text.
      result = { status: 'refused', problem: `could not be recorded (${failureType(error) ?? 'error'}); nothing was written; try again` };
    }
    if (result.status === 'refused') {
      refuse(resolution, result.problem, pendingVia);
      pendingResolution = undefined;
      resolutionOutcome = { error: result.problem };
      continue;
    }
    state = result.state;
    reason = resolution.reason.trim();
    if (result.ledgerTransactionId) ledgerTransactionId = result.ledgerTransactionId;
    upsertSearchAttributes([{ key: SA.reconciliationState, value: state }]);
    resolutionOutcome = { state, auditId: result.auditId, ledgerTransactionId: result.ledgerTransactionId };
    await condition(allHandlersFinished);
    return { state, reason, ledgerTransactionId, auditId: result.auditId };
  }

  /** Before the patch: post, audit, transition as three activities (kept so open workflows replay). */
  async function legacyResolve(resolution: OperatorResolution, actor: `operator:${string}`): Promise<ReconciliationOutcome | null> {
    if (resolution.decision === 'applied' && (postingKind || discrepancy)) {
      let failure: string | null = null;
      try {
        if (discrepancy) {
          // L5: applying a discrepancy brings the ledger down to what the provider reports (once per review item).
          const corrected = await ledger.postSettlementCorrection({
            provider: input.provider,
            paymentReference: event.paymentReference,
            reconciliationId,
            providerEventId: event.providerEventId,
            discrepancy,
            actor,
          });
          ledgerTransactionId = corrected?.transactionId ?? null;
        } else {
          const outcome = postingOutcome(await post(postingKind!, actor), postingKind!, event);
          if (outcome.kind === 'awaiting_capture') failure = `cannot apply: the payment's capture is not in the ledger`;
          else if (outcome.kind === 'refused') failure = `cannot apply: ${outcome.verdict.reason}`;
          else ledgerTransactionId = outcome.transactionId;
        }
      } catch (error) {
        // R4: any final failure of the posting (a domain refusal, an amount of 0) leaves it in review with the reason.
        if (!isActivityFailure(error)) throw error;
        failure = `cannot apply: ${failureText(error)}`;
      }
      if (failure) {
        log.warn('operator resolution could not be applied', { failure });
        pendingResolution = undefined;
        resolutionOutcome = { error: failure };
        return null;
      }
    }
    const { auditId } = await store.recordOperatorResolution({
      reconciliationId,
      resolution,
      previousState: state,
      amountMinor: event.amountMinor,
      currency: event.currency,
      providerAmountMinor: providerPayment?.amountMinor ?? null,
      ledgerTransactionId: resolution.decision === 'applied' ? ledgerTransactionId : null,
    });
    await transition(resolution.decision === 'rejected' ? 'rejected' : 'applied', actor, resolution.reason);
    resolutionOutcome = { state, auditId, ledgerTransactionId: resolution.decision === 'applied' ? ledgerTransactionId : null };
    await condition(allHandlersFinished);
    return { state, reason, ledgerTransactionId, auditId };
  }
}
