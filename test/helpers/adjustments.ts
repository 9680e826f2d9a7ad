// Ledger-adjustment set-ups shared by the people, IdP and dual-control tests (A11, A12, A26–A28): a profile with a
// provider of its own (a payments API nobody answers: the adjustments never query it), and a payment an adjustment
// may be made on (a reconciliation row in manual_review).
import { randomUUID } from 'node:crypto';
import type { Db } from '../../src/db/client.js';
import { reconciliations } from '../../src/db/schema/index.js';
import { testProfile } from './profile.js';
import { uniqueRef } from './reconciliation.js';

/** The test profile with `provider` added; `inbound` and `idp` merged in when given. */
export function adjustmentProfile(
  provider: string,
  options: { idp?: Record<string, unknown>; dualControlAbove?: Record<string, number> } = {},
) {
  return testProfile({
    ...(options.idp ? { idp: options.idp } : {}),
    inbound: {
      ...(options.dualControlAbove ? { dual_control_above: options.dualControlAbove } : {}),
      providers: {
        [provider]: { scheme: 'stripe', secret_ref: 'env:SANDBOX_STRIPE_WEBHOOK_SECRET', api_base_url: 'http://127.0.0.1:9' },
      },
    },
  });
}

/** A payment of 50.00 EUR the ledger may be adjusted on: a reconciliation row of it in manual_review; its reference. */
export async function reviewPayment(db: Db, provider: string, label: string): Promise<string> {
  const ref = uniqueRef(label);
  await db.insert(reconciliations).values({
    id: `reconcile:${provider}:evt_${randomUUID()}`,
    provider,
    providerEventId: `evt_${randomUUID()}`,
    eventType: 'payment.succeeded',
    paymentReference: ref,
    amountMinor: 5000n,
    currency: 'EUR',
    effectiveAt: new Date(),
    state: 'manual_review',
    acknowledgedAt: new Date(),
  });
  return ref;
}

/** The admin API body of a ledger adjustment of `amount` minor units of EUR on `ref` (POST /ledger/adjustments). */
export const adjustmentBody = (provider: string, ref: string, amount: string, reason: string) => ({
  provider,
  payment_reference: ref,
  amount_minor: amount,
  currency: 'EUR',
  reason,
});
