// A11 the one money policy, pure part: the currency rule, the default limit for currencies the map does not
// name, and the per-payment and per-person budgets (fast-check: no split of an amount above the limit posts
// alone in full).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { judge, limitFor, type MoneyLimits, type MoneyRequest } from '../../src/ledger/money-policy.js';

const limits: MoneyLimits = { above: { USD: 100000n, EUR: 100000n }, defaultMajor: null };
const request = (amountMinor: string, currency = 'EUR', extra: Partial<MoneyRequest> = {}): MoneyRequest => ({
  provider: 'stripe',
  paymentReference: 'pi_1',
  paymentCurrency: 'EUR',
  posts: { amountMinor, currency },
  operatorKeys: ['apk_a'],
  ...extra,
});
const none = { payment: 0n, operator: 0n };

describe('A11 money policy', () => {
  it('A11 a currency the map does not name gets the default, else the smallest named limit; an empty map has none', () => {
    expect(limitFor(limits, 'GBP')).toBe(100000n);
    expect(limitFor({ above: { USD: 500n, EUR: 700n }, defaultMajor: null }, 'JPY')).toBe(5n); // A22: 5.00 USD in yen units
    expect(limitFor({ above: { USD: 5n }, defaultMajor: '50' }, 'JPY')).toBe(50n);
    expect(limitFor({ above: {}, defaultMajor: null }, 'JPY')).toBeNull();
  });

  it('A11 another currency than the payment is refused without a reason and always dual control with one', () => {
    expect(judge(limits, request('900000000', 'GBP'), none)).toMatchObject({
      kind: 'refused',
      problem: expect.stringMatching(/currency_reason/),
    });
    expect(judge(limits, request('1', 'GBP', { currencyReason: 'acquirer settled in GBP' }), none).kind).toBe('dual_control');
    expect(judge({ above: {}, defaultMajor: null }, request('1', 'GBP', { currencyReason: 'x' }), none).kind).toBe(
      'dual_control',
    );
  });

  it('A11 per request, per payment and per person: strictly above the limit is dual control, negative amounts count by size', () => {
    expect(judge(limits, request('100000'), none).kind).toBe('alone');
    expect(judge(limits, request('100001'), none).kind).toBe('dual_control');
    expect(judge(limits, request('-100001'), none).kind).toBe('dual_control');
    expect(judge(limits, request('1'), { payment: 100000n, operator: 0n }).kind).toBe('dual_control');
    expect(judge(limits, request('1'), { payment: 0n, operator: 100000n }).kind).toBe('dual_control');
    expect(judge(limits, { ...request('1'), posts: null, about: [{ amountMinor: '100001', currency: 'GBP' }] }, none).kind).toBe(
      'dual_control',
    );
  });

  it('A11 property: however an amount is split, what one person posts alone never exceeds the limit', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.bigInt({ min: -200000n, max: 200000n }).filter((v) => v !== 0n),
          { minLength: 1, maxLength: 30 },
        ),
        (parts) => {
          let alone = 0n;
          for (const part of parts) {
            const verdict = judge(limits, request(part.toString()), { payment: alone, operator: alone });
            if (verdict.kind === 'alone') alone += part < 0n ? -part : part;
          }
          expect(alone <= 100000n).toBe(true);
        },
      ),
    );
  });
});
