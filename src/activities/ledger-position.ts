// L5 activities: what the ledger holds for a payment (to tell a discrepancy after settlement from a plain
// rejection), and an operator's correction that brings a payment's settled amount down to the provider's report.
import type { Db } from '../db/client.js';
import type { Discrepancy, LedgerPosition } from '../inbound/verdict.js';
import { buildPosting } from '../ledger/postings.js';
import { paymentPosition, postSettledCorrection, SETTLEMENT_CORRECTION } from '../ledger/store.js';
import { ledgerMutations } from '../metrics/inbound-ledger.js';

export interface SettlementCorrectionRequest {
  provider: string;
  paymentReference: string;
  reconciliationId: string;
  providerEventId: string;
  discrepancy: Discrepancy;
  actor: string;
}

export function createLedgerPositionActivities({ db }: { db: Db }) {
  return {
    async ledgerPosition(request: { provider: string; paymentReference: string }): Promise<LedgerPosition | null> {
      const position = await paymentPosition(db, request.provider, request.paymentReference);
      return (
        position && {
          transactionId: position.transactionId,
          capturedMinor: position.capturedMinor.toString(),
          settledMinor: position.settledMinor.toString(),
          currency: position.currency,
        }
      );
    },

    /**
     * L5: gives back what the ledger holds beyond what the provider reports (a reversal keyed by the review item,
     * once); null when the ledger is already there. Never credits: a ledger below the provider's report is left
     * for an adjustment.
     */
    async postSettlementCorrection(request: SettlementCorrectionRequest): Promise<{ transactionId: string } | null> {
      const { posted, reported } = request.discrepancy;
      const posting = (amount: bigint) =>
        buildPosting({
          kind: 'reversal',
          provider: request.provider,
          providerEventId: request.providerEventId,
          paymentReference: request.paymentReference,
          amountMinor: amount.toString(),
          currency: posted.currency,
        });
      // Failed, or a report in another currency: nothing of the ledger's capture is settled.
      const failed = reported.status === 'failed' || reported.currency !== posted.currency;
      const result = await postSettledCorrection(
        db,
        {
          posting,
          provider: request.provider,
          paymentReference: request.paymentReference,
          reportedCaptureMinor: failed ? null : BigInt(reported.amountMinor),
          key: `${request.provider}:${request.reconciliationId}${SETTLEMENT_CORRECTION}`,
        },
        { providerEventId: request.providerEventId, reconciliationId: request.reconciliationId, effectiveAt: new Date().toISOString(), actor: request.actor, description: `settlement correction ${request.paymentReference}` },
      );
      if (result && !result.replayed) ledgerMutations.inc({ kind: 'reversal', result: 'posted' });
      return result && { transactionId: result.transactionId };
    },
  };
}
