// L5 activities: what the ledger holds for a payment (to tell a discrepancy after settlement from a plain
// rejection), and an operator's correction that brings a payment's settled amount down to the provider's report.
import type { Db } from '../db/client.js';
import type { Discrepancy, LedgerPosition } from '../inbound/verdict.js';
import { correctSettlementWithin } from '../ledger/settlement-correction.js';
import { paymentPosition } from '../ledger/store.js';
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

    /** L5 (before the one-transaction resolution): the correction in its own transaction; null when none is due. */
    async postSettlementCorrection(request: SettlementCorrectionRequest): Promise<{ transactionId: string } | null> {
      const { actor, ...correction } = request;
      const result = await db.transaction((tx) => correctSettlementWithin(tx, correction, { actor, description: `settlement correction ${request.paymentReference}` }));
      if (result && !result.replayed) ledgerMutations.inc({ kind: 'reversal', result: 'posted' });
      return result && { transactionId: result.transactionId };
    },
  };
}
