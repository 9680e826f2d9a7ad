// Phase 2, settle (I9, I10, L5): the provider's answer becomes applied or rejected; a conflict, a timeout or a
// settlement discrepancy with the ledger parks the reconciliation in manual_review.
import { patched } from '@temporalio/workflow';
import { discrepancyReason, settlementDiscrepancy, type Verdict } from '../../inbound/verdict.js';
import { SETTLEMENT_DISCREPANCY } from '../patches.js';
import { ledger } from './activities.js';
import { transition, type ReconciliationOutcome, type Run } from './run.js';

/** The terminal outcome, or null once the reconciliation waits in manual_review for an operator. */
export async function settle(run: Run, answer: Verdict): Promise<ReconciliationOutcome | null> {
  const { input, postingKind, providerPayment } = run;
  let verdict = answer;
  // L5: a payment-level event the provider now contradicts (failed, lower amount) after the ledger credited the
  // payment reverts nothing: it becomes a review item with both sides kept on the reconciliation. Behind a patch:
  // executions that passed this point before it existed did not ask the ledger (docs/workflow-versioning.md).
  const answered = verdict.kind === 'declined' || (verdict.kind === 'conflict' && !verdict.reason.startsWith('timeout'));
  if (answered && (postingKind === 'payment' || postingKind === null) && providerPayment && patched(SETTLEMENT_DISCREPANCY)) {
    run.discrepancy = settlementDiscrepancy(
      providerPayment,
      await ledger.ledgerPosition({ provider: input.provider, paymentReference: input.event.paymentReference }),
    );
    // L3: a capture refused because an operator's posting holds the key keeps naming that posting.
    const inTheWay = verdict.kind === 'conflict' && verdict.reason.startsWith('ledger_conflict') ? ` (${verdict.reason})` : '';
    if (run.discrepancy) verdict = { kind: 'conflict', reason: `${discrepancyReason(run.discrepancy)}${inTheWay}` };
  }

  switch (verdict.kind) {
    case 'confirmed':
      await transition(run, 'applied', 'system', verdict.reason);
      return { state: run.state, reason: run.reason, ledgerTransactionId: run.ledgerTransactionId, auditId: null };
    case 'declined':
    case 'stale':
      await transition(run, 'rejected', 'system', verdict.reason);
      return { state: run.state, reason: run.reason, ledgerTransactionId: run.ledgerTransactionId, auditId: null };
    default:
      await transition(run, 'manual_review', 'system', verdict.reason);
      return null;
  }
}
