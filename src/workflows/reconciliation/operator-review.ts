// Phase 3, operator review (I11, R2): only an operator leaves manual_review, in one transaction that writes
// the posting, the audit row and the transition, and every resolution leaves one audit row.
import { allHandlersFinished, condition, patched, upsertSearchAttributes } from '@temporalio/workflow';
import type { OperatorResolution } from '../../shared/inbound.js';
import { failureType } from '../../shared/failures.js';
import { SA } from '../../shared/search-attributes.js';
import { resolutions } from './activities.js';
import { refuse } from './handlers.js';
import { legacyResolve } from './legacy-resolution.js';
import { ensureAllowed, type ReconciliationOutcome, type Run } from './run.js';

/** Patch id of the one-transaction resolution (R2); histories from before it replay the old three steps. */
export const ONE_TRANSACTION_RESOLUTION = 'resolution-one-transaction';

type Committed = Awaited<ReturnType<typeof resolutions.commitOperatorResolution>>;

async function commitResolution(run: Run, resolution: OperatorResolution): Promise<Committed> {
  const { input, providerPayment } = run;
  try {
    return await resolutions.commitOperatorResolution({
      reconciliationId: run.reconciliationId,
      provider: input.provider,
      event: input.event,
      postingKind: run.postingKind,
      providerPayment: providerPayment && {
        amountMinor: providerPayment.amountMinor,
        currency: providerPayment.currency,
        refunds: providerPayment.refunds,
        disputes: providerPayment.disputes,
        reversals: providerPayment.reversals,
      },
      resolution,
      previousState: run.state,
      discrepancy: run.discrepancy,
    });
  } catch (error) {
    // Retries exhausted: nothing was written (one transaction), so the operator may simply try again.
    // Only the failure's type: a database error's message may quote the operator's text.
    return {
      status: 'refused',
      problem: `could not be recorded (${failureType(error) ?? 'error'}); nothing was written; try again`,
    };
  }
}

export async function operatorReview(run: Run): Promise<ReconciliationOutcome> {
  for (;;) {
    await condition(() => run.pendingResolution !== undefined);
    const resolution = run.pendingResolution!;
    const actor = `operator:${resolution.operator.trim()}` as const;
    const to = resolution.decision === 'rejected' ? 'rejected' : 'applied';
    ensureAllowed(run, to, actor);
    if (!patched(ONE_TRANSACTION_RESOLUTION)) {
      const legacy = await legacyResolve(run, resolution, actor);
      if (legacy) return legacy;
      continue;
    }
    const result = await commitResolution(run, resolution);
    if (result.status === 'refused') {
      refuse(run, resolution, result.problem, run.pendingVia);
      run.pendingResolution = undefined;
      run.resolutionOutcome = { error: result.problem };
      continue;
    }
    run.state = result.state;
    run.reason = resolution.reason.trim();
    if (result.ledgerTransactionId) run.ledgerTransactionId = result.ledgerTransactionId;
    upsertSearchAttributes([{ key: SA.reconciliationState, value: run.state }]);
    run.resolutionOutcome = { state: run.state, auditId: result.auditId, ledgerTransactionId: result.ledgerTransactionId };
    await condition(allHandlersFinished);
    return { state: run.state, reason: run.reason, ledgerTransactionId: run.ledgerTransactionId, auditId: result.auditId };
  }
}
