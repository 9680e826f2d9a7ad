// Before the one-transaction patch (R2): post, audit, transition as three activities, kept so that open
// workflows from before it replay (docs/workflow-versioning.md).
import { allHandlersFinished, condition, log } from '@temporalio/workflow';
import { postingOutcome } from '../../inbound/posting-outcome.js';
import type { OperatorResolution } from '../../shared/inbound.js';
import { failureText, isActivityFailure } from '../../shared/failures.js';
import { ledger, store } from './activities.js';
import { post, transition, type ReconciliationOutcome, type Run } from './run.js';

/** The posting (or L5 settlement correction) an applied resolution makes; the reason it could not, or null. */
async function applyPosting(run: Run, actor: `operator:${string}`): Promise<string | null> {
  const { input, postingKind, discrepancy } = run;
  try {
    if (discrepancy) {
      // L5: applying a discrepancy brings the ledger down to what the provider reports (once per review item).
      const corrected = await ledger.postSettlementCorrection({
        provider: input.provider,
        paymentReference: input.event.paymentReference,
        reconciliationId: run.reconciliationId,
        providerEventId: input.event.providerEventId,
        discrepancy,
        actor,
      });
      run.ledgerTransactionId = corrected?.transactionId ?? null;
    } else {
      const outcome = postingOutcome(await post(run, postingKind!, actor), postingKind!, input.event);
      if (outcome.kind === 'awaiting_capture') return `cannot apply: the payment's capture is not in the ledger`;
      if (outcome.kind === 'refused') return `cannot apply: ${outcome.verdict.reason}`;
      run.ledgerTransactionId = outcome.transactionId;
    }
  } catch (error) {
    // R4: any final failure of the posting (a domain refusal, an amount of 0) leaves it in review with the reason.
    if (!isActivityFailure(error)) throw error;
    return `cannot apply: ${failureText(error)}`;
  }
  return null;
}

export async function legacyResolve(
  run: Run,
  resolution: OperatorResolution,
  actor: `operator:${string}`,
): Promise<ReconciliationOutcome | null> {
  const { input, providerPayment } = run;
  if (resolution.decision === 'applied' && (run.postingKind || run.discrepancy)) {
    const failure = await applyPosting(run, actor);
    if (failure) {
      log.warn('operator resolution could not be applied', { failure });
      run.pendingResolution = undefined;
      run.resolutionOutcome = { error: failure };
      return null;
    }
  }
  const { auditId } = await store.recordOperatorResolution({
    reconciliationId: run.reconciliationId,
    resolution,
    previousState: run.state,
    amountMinor: input.event.amountMinor,
    currency: input.event.currency,
    providerAmountMinor: providerPayment?.amountMinor ?? null,
    ledgerTransactionId: resolution.decision === 'applied' ? run.ledgerTransactionId : null,
  });
  await transition(run, resolution.decision === 'rejected' ? 'rejected' : 'applied', actor, resolution.reason);
  const ledgerTransactionId = resolution.decision === 'applied' ? run.ledgerTransactionId : null;
  run.resolutionOutcome = { state: run.state, auditId, ledgerTransactionId };
  await condition(allHandlersFinished);
  return { state: run.state, reason: run.reason, ledgerTransactionId: run.ledgerTransactionId, auditId };
}
