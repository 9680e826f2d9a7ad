// I9/I10: the ledger domain: balanced postings, idempotency keys, content hashes, verdicts on provider answers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildAdjustment, buildPosting, contentHash, idempotencyKey, isBalanced, legacyContentHash, LedgerValidationError, POSTING_KINDS } from '../../src/ledger/postings.js';
import { discrepancyReason, judge, settlementDiscrepancy } from '../../src/inbound/verdict.js';
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
    // L1: a reversing posting is once per provider object, whatever event reports it.
    expect(idempotencyKey({ ...base, kind: 'refund', providerObjectId: 're_1' })).toBe('sandbox-stripe:pay_1:refund:re_1');
    expect(idempotencyKey({ ...base, kind: 'chargeback', providerEventId: 'evt_9', providerObjectId: 'dp_1' })).toBe('sandbox-stripe:pay_1:chargeback:dp_1');
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

const event = (type: NormalizedProviderEvent['type'], amountMinor = '1000'): NormalizedProviderEvent => ({
  providerEventId: 'evt_x',
  type,
  paymentReference: 'pay_x',
  amountMinor,
  currency: 'EUR',
  effectiveAt: '2026-01-01T00:00:00Z',
});
const payment = (p: Partial<ProviderPayment>): ProviderPayment => ({ reference: 'pay_x', status: 'succeeded', amountMinor: '1000', currency: 'EUR', ...p });

describe('I8 verdicts on the provider answer', () => {
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
    // L1: a status alone confirms nothing; an object of another kind is not this event's.
    ['refund.succeeded', payment({}), 'conflict'],
    ['refund.succeeded', payment({ status: 'refunded' }), 'conflict'],
    ['chargeback.created', payment({ status: 'disputed' }), 'conflict'],
    ['chargeback.created', payment({ status: 'disputed', refunds: [{ id: 're_1', amountMinor: '1000' }] }), 'conflict'],
    ['chargeback.created', payment({ status: 'disputed', disputes: [{ id: 'dp_1', amountMinor: '1000' }] }), 'confirmed'],
    ['payment.reversed', payment({ reversals: [{ id: 'rv_1', amountMinor: '1000' }] }), 'confirmed'],
  ] as const)('I8 %s with provider %j → %s', (type, answer, kind) => {
    expect(judge(event(type), answer).kind).toBe(kind);
  });
});

describe('L1 an item event is matched to one provider object', () => {
  const refunds = [{ id: 're_a', amountMinor: '300' }, { id: 're_b', amountMinor: '300' }, { id: 're_c', amountMinor: '200' }];
  it('L1 by its id: that object only; an unlisted id or another amount goes to a person', () => {
    expect(judge({ ...event('refund.succeeded'), amountMinor: '300', providerObjectId: 're_b' }, payment({ refunds }))).toMatchObject({
      kind: 'confirmed',
      match: { candidates: ['re_b'], matchedBy: 'id' },
    });
    expect(judge({ ...event('refund.succeeded'), amountMinor: '300', providerObjectId: 're_z' }, payment({ refunds })).reason).toMatch(/^item_not_listed: the provider lists no refund re_z/);
    expect(judge({ ...event('refund.succeeded'), amountMinor: '300', providerObjectId: 're_c' }, payment({ refunds })).reason).toMatch(/^amount_mismatch/);
  });
  it('L1 without an id: every listed object of its amount is a candidate, in the provider order', () => {
    expect(judge({ ...event('refund.succeeded'), amountMinor: '300' }, payment({ refunds }))).toMatchObject({ kind: 'confirmed', match: { candidates: ['re_a', 're_b'], matchedBy: 'amount' } });
  });
});

describe('L5 discrepancy after settlement', () => {
  const position = { transactionId: 'ltx_1', capturedMinor: '1000', settledMinor: '700', currency: 'EUR' };
  it('L5 failed, a lower amount or another currency against a credited payment is a discrepancy; agreement or no credit is not', () => {
    expect(settlementDiscrepancy(payment({ status: 'failed' }), position)?.reported).toEqual({ status: 'failed', amountMinor: '1000', currency: 'EUR', settledMinor: '0' });
    expect(settlementDiscrepancy(payment({ amountMinor: '900', refunds: [{ id: 're_1', amountMinor: '300' }] }), position)?.reported.settledMinor).toBe('600');
    expect(settlementDiscrepancy(payment({ currency: 'USD' }), position)).not.toBeNull();
    expect(settlementDiscrepancy(payment({}), position)).toBeNull();
    expect(settlementDiscrepancy(payment({ amountMinor: '1100' }), position)).toBeNull();
    expect(settlementDiscrepancy(payment({ status: 'failed' }), null)).toBeNull();
    expect(discrepancyReason(settlementDiscrepancy(payment({ status: 'failed' }), position)!)).toBe(
      'post_settlement_discrepancy: ledger settled 700 EUR (captured 1000), provider reports failed 1000 EUR (settled 0); nothing reverted',
    );
  });
});

describe('A21 content hash', () => {
  it('A21 the hash does not depend on the order of the entries (sorted byte by byte, as the database sorts them)', () => {
    const entry = fc.record({ account: fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }), amountMinor: fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }), currency: fc.constantFrom('EUR', 'USD') });
    fc.assert(
      fc.property(fc.array(entry, { minLength: 2, maxLength: 6 }), fc.integer({ min: 0, max: 5 }), (entries, shift) => {
        const posting = { ...buildPosting({ ...base, kind: 'payment' }), entries };
        const rotated = { ...posting, entries: [...entries.slice(shift % entries.length), ...entries.slice(0, shift % entries.length)] };
        expect(contentHash(rotated)).toBe(contentHash(posting));
      }),
    );
  });

  it('A21 rows hashed before migration 0029 keep their hash except where the locale sorted differently (provisional accounts)', () => {
    for (const kind of POSTING_KINDS) {
      const posting = buildPosting({ ...base, kind, providerObjectId: 're_1' });
      if (kind.startsWith('provisional')) expect(legacyContentHash(posting)).not.toBe(contentHash(posting));
      else expect(legacyContentHash(posting)).toBe(contentHash(posting));
    }
  });
});
