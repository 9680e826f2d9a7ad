// The one activity that commits an operator's resolution (R2), and the end of the run once it committed.
import { allHandlersFinished, condition, upsertSearchAttributes } from '@temporalio/workflow';
import type { OperatorResolution } from '../../shared/inbound.js';
import { failureType } from '../../shared/failures.js';
import { SA } from '../../shared/search-attributes.js';
import { resolutions } from './activities.js';
import type { ReconciliationOutcome, Run } from './run.js';

type Command = Parameters<typeof resolutions.commitOperatorResolution>[0];
export type AccessCommand = NonNullable<Command['access']>;
type Committed = Awaited<ReturnType<typeof resolutions.commitOperatorResolution>>;

export async function commitResolution(run: Run, resolution: OperatorResolution, access?: Command['access']): Promise<Committed> {
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
      ...(access ? { access } : {}),
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

/** The committed resolution ends the run: state, search attribute, the update's answer. */
export async function finish(
  run: Run,
  result: Extract<Committed, { status: 'committed' }>,
  reason: string,
): Promise<ReconciliationOutcome> {
  run.state = result.state;
  run.reason = reason.trim();
  if (result.ledgerTransactionId) run.ledgerTransactionId = result.ledgerTransactionId;
  upsertSearchAttributes([{ key: SA.reconciliationState, value: run.state }]);
  const answer = { state: run.state, auditId: result.auditId, ledgerTransactionId: result.ledgerTransactionId };
  run.resolutionOutcome = answer;
  if (run.pendingDecision) run.decisionOutcome = answer;
  await condition(allHandlersFinished);
  return { state: run.state, reason: run.reason, ledgerTransactionId: run.ledgerTransactionId, auditId: result.auditId };
}
