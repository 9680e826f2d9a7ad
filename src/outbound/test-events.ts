// M7: `apipay trigger <type>`: a sample event for one merchant account, as a normal Kafka envelope (O1) that the
// dispatcher fans out like any other, so it reaches that account's test-mode endpoints and `apipay listen`. Only
// the types below exist; each body is fixed sample data (no personal data), marked `data.test_event: true`, and
// valid against its catalog schema (M8, test/unit/catalog.test.ts).
import { ulid } from 'ulid';
import { newId } from '../shared/ids.js';

type Sample = (ids: { object: string }) => Record<string, unknown>;

const payment =
  (status: string, extra: Record<string, unknown> = {}): Sample =>
  ({ object: id }) => ({
    id,
    object: 'payment',
    amount: 2000,
    currency: 'eur',
    status,
    description: 'ApiPay test event',
    ...extra,
  });

const SAMPLES: Record<string, { prefix: string; body: Sample }> = {
  'payment.succeeded': { prefix: 'pay', body: payment('succeeded') },
  'payment.failed': { prefix: 'pay', body: payment('failed', { failure_code: 'card_declined' }) },
  'payment.pending': { prefix: 'pay', body: payment('pending') },
  // M8: payment.reversed is the ledger's event (src/ledger/announce.ts), so its sample is a ledger transaction.
  'payment.reversed': {
    prefix: 'ltx',
    body: ({ object: id }) => ({
      id,
      object: 'ledger_transaction',
      kind: 'reversal',
      amount_minor: '2000',
      currency: 'EUR',
      payment_reference: 'pay_test_sample',
      provider: 'sandbox',
      provider_event_id: 'evt_test_sample',
      provider_object_id: null,
      reconciliation_id: 'reconcile:sandbox:evt_test_sample',
      effective_at: '2026-12-01T09:30:00.000Z',
      posted_at: '2026-12-01T09:30:02.000Z',
      posted_by: 'system',
    }),
  },
  'refund.succeeded': {
    prefix: 're',
    body: ({ object: id }) => ({
      id,
      object: 'refund',
      amount: 500,
      currency: 'eur',
      status: 'succeeded',
      payment: 'pay_test_sample',
    }),
  },
  'dispute.created': {
    prefix: 'dp',
    body: ({ object: id }) => ({
      id,
      object: 'dispute',
      amount: 2000,
      currency: 'eur',
      status: 'needs_response',
      payment: 'pay_test_sample',
    }),
  },
};

/** The types `apipay trigger` knows, in a stable order. */
export const TRIGGER_TYPES = Object.keys(SAMPLES).sort();

/** The envelope to publish, or undefined for a type that has no sample. Test mode (livemode false) always. */
export function testEventEnvelope(type: string, merchantAccount: string, now: Date) {
  const sample = SAMPLES[type];
  if (!sample) return undefined;
  return {
    id: newId('evt'),
    object: 'event' as const,
    type,
    created: Math.floor(now.getTime() / 1000),
    livemode: false,
    data: { object: sample.body({ object: `${sample.prefix}_test_${ulid().toLowerCase()}` }), test_event: true },
    merchant_account: merchantAccount,
  };
}
