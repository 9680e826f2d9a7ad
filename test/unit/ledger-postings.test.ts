// I9/I10: the ledger domain: balanced postings, idempotency keys, content hashes, verdicts on provider answers.
import { describe, expect, it } from 'vitest';
import { buildAdjustment, buildPosting, contentHash, idempotencyKey, isBalanced, LedgerValidationError, POSTING_KINDS } from '../../src/ledger/postings.js';
import { judge } from '../../src/inbound/verdict.js';
import type { NormalizedProviderEvent, ProviderPayment } from '../../src/shared/inbound.js';

const base = { provider: 'sandbox-stripe', providerEventId: 'evt_1', paymentReference: 'pay_1', amountMinor: '1250', currency: 'EUR' };

describe('I9 ledger postings', () => {
  it.each(POSTING_KINDS)('I9 a %s posting is double entry and balances', (kind) => {
    const posting = buildPosting({ ...base, kind });
    expect(posting.entries).toHaveLength(2);
    expect(isBalanced(posting.entries)).toBe(true);
    expect(posting.entries.every((e) => e.currency === 'EUR')).toBe(true);
  });

  it('L3 an adjustment is balanced, signed (negative gives back), keyed by its own key; zero is refused', () => {
    const adj = buildAdjustment({ adjustmentKey: 'adj_1', provider: 'sandbox-stripe', paymentReference: 'pay_1', amountMinor: '-100', currency: 'EUR' });
    expect(adj).toMatchObject({ kind: 'adjustment', idempotencyKey: 'sandbox-stripe:pay_1:adjustment:adj_1', amountMinor: -100n });
    expect(adj.entries).toEqual([
      { account: 'provider_clearing:sandbox-stripe', amountMinor: -100n, currency: 'EUR' },
      { account: 'payments:sandbox-stripe:pay_1', amountMinor: 100n, currency: 'EUR' },
    ]);
    expect(isBalanced(adj.entries)).toBe(true);
    expect(() => buildAdjustment({ adjustmentKey: 'a', provider: 'p', paymentReference: 'r', amountMinor: '0', currency: 'EUR' })).toThrow(LedgerValidationError);
  });

  it('I9 a payment credits the payment account and debits provider clearing; a refund does the opposite', () => {
    const pay = buildPosting({ ...base, kind: 'payment' });
    expect(pay.entries).toEqual([
      { account: 'provider_clearing:sandbox-stripe', amountMinor: 1250n, currency: 'EUR' },
      { account: 'payments:sandbox-stripe:pay_1', amountMinor: -1250n, currency: 'EUR' },
    ]);
    const refund = buildPosting({ ...base, kind: 'refund', amountMinor: '250' });
    expect(refund.entries[0]).toEqual({ account: 'payments:sandbox-stripe:pay_1', amountMinor: 250n, currency: 'EUR' });
  });

  it('I9 keys: a payment settles once per payment reference, reversals once per provider event', () => {
    expect(idempotencyKey({ ...base, kind: 'payment' })).toBe('sandbox-stripe:pay_1:payment');
    expect(idempotencyKey({ ...base, kind: 'payment', providerEventId: 'evt_2' })).toBe('sandbox-stripe:pay_1:payment');
    expect(idempotencyKey({ ...base, kind: 'refund' })).toBe('sandbox-stripe:evt_1:refund');
  });

  it('I9 same content hashes the same whatever the event id; other amounts hash differently', () => {
    const a = contentHash(buildPosting({ ...base, kind: 'payment' }));
    expect(contentHash(buildPosting({ ...base, kind: 'payment', providerEventId: 'evt_other' }))).toBe(a);
    expect(contentHash(buildPosting({ ...base, kind: 'payment', amountMinor: '1251' }))).not.toBe(a);
    expect(contentHash(buildPosting({ ...base, kind: 'payment', currency: 'USD' }))).not.toBe(a);
  });

  it.each(['0', '-5', '12.5', 'abc', ''])('I9 amount %j is refused', (amountMinor) => {
    expect(() => buildPosting({ ...base, kind: 'payment', amountMinor })).toThrow(LedgerValidationError);
  });
});

describe('I8 verdicts on the provider answer', () => {
  const event = (type: NormalizedProviderEvent['type'], amountMinor = '1000'): NormalizedProviderEvent => ({
    providerEventId: 'evt_x',
    type,
    paymentReference: 'pay_x',
    amountMinor,
    currency: 'EUR',
    effectiveAt: '2026-01-01T00:00:00Z',
  });
  const payment = (p: Partial<ProviderPayment>): ProviderPayment => ({ reference: 'pay_x', status: 'succeeded', amountMinor: '1000', currency: 'EUR', ...p });

  it.each([
    ['payment.succeeded', null, 'unknown'],
    ['payment.succeeded', payment({}), 'confirmed'],
    ['payment.succeeded', payment({ status: 'pending' }), 'unknown'],
    ['payment.succeeded', payment({ status: 'failed' }), 'declined'],
    ['payment.succeeded', payment({ amountMinor: '999' }), 'conflict'],
    ['payment.succeeded', payment({ currency: 'USD' }), 'conflict'],
    ['payment.failed', payment({ status: 'failed' }), 'declined'],
    ['payment.failed', payment({}), 'stale'],
    ['payment.pending', payment({ status: 'refunded' }), 'stale'],
    ['refund.succeeded', payment({ status: 'refunded', refunds: [{ id: 're_1', amountMinor: '1000' }] }), 'confirmed'],
    ['refund.succeeded', payment({ refunds: [{ id: 're_1', amountMinor: '400' }] }), 'conflict'],
    ['refund.succeeded', payment({}), 'unknown'],
    ['chargeback.created', payment({ status: 'disputed' }), 'confirmed'],
  ] as const)('I8 %s with provider %j → %s', (type, answer, kind) => {
    expect(judge(event(type), answer).kind).toBe(kind);
  });
});
