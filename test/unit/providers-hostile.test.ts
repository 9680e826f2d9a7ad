// R4: signed payloads that are valid JSON but would fail later (the ledger, a bigint column, the type map): the
// adapter refuses what can never be stored and never resolves a type through Object.prototype.
import { describe, expect, it } from 'vitest';
import { createHmacAdapter } from '../../src/providers/hmac.js';
import { createStripeAdapter } from '../../src/providers/stripe.js';
import { PayloadError } from '../../src/providers/types.js';

const stripe = createStripeAdapter({ provider: 'p-stripe', secret: 's', toleranceSeconds: 300 });
const hmac = createHmacAdapter({ provider: 'p-hmac', secret: 's', header: 'X-Sig', encoding: 'hex' });
const T = 1_764_579_600;

const stripeBody = (type: string, amount: unknown) =>
  Buffer.from(JSON.stringify({ id: 'evt_h', type, created: T, data: { object: { id: 'pi_h', amount, currency: 'eur' } } }));
const hmacBody = (type: string, amount: unknown) =>
  Buffer.from(
    JSON.stringify({ event_id: 'hev_h', event_type: type, occurred_at: '2026-12-01T09:00:00Z', payment: { reference: 'pi_h', amount_minor: amount, currency: 'EUR' } }),
  );

function failure(fn: () => unknown): { reason: string; message: string } | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    if (error instanceof PayloadError) return { reason: error.reason, message: error.message };
    throw error;
  }
}

describe('R4 provider adapters against hostile signed payloads', () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])(
    'R4 a signed type %j is not handled (never resolved through the prototype of the type map)',
    (type) => {
      expect(failure(() => stripe.extract(stripeBody(type, 100)))?.reason).toBe('unsupported_type');
      expect(failure(() => hmac.extract(hmacBody(type, '100')))?.reason).toBe('unsupported_type');
    },
  );

  it.each([
    ['19 digits over the bigint range', '9999999999999999999'],
    ['one over the bigint maximum', '9223372036854775808'],
  ])('R4 an amount of %s is refused with a clear error (a bigint column cannot hold it)', (_name, amount) => {
    const refused = failure(() => hmac.extract(hmacBody('payment.captured', amount)));
    expect(refused?.reason).toBe('invalid_fields');
    expect(refused?.message).toMatch(/amount_minor/);
    expect(refused?.message).toMatch(/9223372036854775807/);
    // Stripe sends numbers; a number that large is not a safe integer and was already refused.
    expect(failure(() => stripe.extract(stripeBody('payment_intent.succeeded', Number(amount))))?.reason).toBe('invalid_fields');
  });

  it('R4 the largest bigint amount is accepted', () => {
    expect(hmac.extract(hmacBody('payment.captured', '9223372036854775807')).amountMinor).toBe('9223372036854775807');
  });

  it('R4 an amount of 0 passes the adapter (valid shape): the reconciliation parks it in manual_review', () => {
    expect(stripe.extract(stripeBody('payment_intent.succeeded', 0)).amountMinor).toBe('0');
    expect(hmac.extract(hmacBody('payment.captured', '0')).amountMinor).toBe('0');
  });
});
