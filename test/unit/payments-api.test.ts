// I8: the ApiPay-shaped payments client of the sandbox schemes (src/providers/payments-api.ts): 404 is "unknown",
// 5xx and network errors are typed errors with the status.
import { describe, expect, it } from 'vitest';
import { fetchProviderPayment, ProviderApiError } from '../../src/providers/payments-api.js';

const fakeFetch = (status: number, body: string, seen: string[] = []) =>
  (async (url: string | URL | Request) => {
    seen.push(String(url));
    return new Response(body, { status, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;

describe('I8 provider client', () => {
  it('I8 200 returns the payment from GET {base}/payments/{ref}', async () => {
    const seen: string[] = [];
    const payment = { reference: 'pay 1', status: 'succeeded', amountMinor: '100', currency: 'EUR' };
    const got = await fetchProviderPayment({
      baseUrl: 'http://p.test/stripe/',
      paymentReference: 'pay 1',
      fetch: fakeFetch(200, JSON.stringify(payment), seen),
    });
    expect(got).toEqual(payment);
    expect(seen).toEqual(['http://p.test/stripe/payments/pay%201']);
  });

  it('I8 404 means the provider does not know it: null, never "paid"', async () => {
    expect(
      await fetchProviderPayment({ baseUrl: 'http://p.test', paymentReference: 'x', fetch: fakeFetch(404, '{}') }),
    ).toBeNull();
  });

  it.each([
    [503, 'down', 503],
    [200, 'not json', 200],
    [200, JSON.stringify({ reference: 'x', status: 'maybe', amountMinor: '1', currency: 'EUR' }), 200],
  ])('I8 status %i body %j is a ProviderApiError with status', async (status, body, expected) => {
    const error = await fetchProviderPayment({
      baseUrl: 'http://p.test',
      paymentReference: 'x',
      fetch: fakeFetch(status, body),
    }).catch((e) => e);
    expect(error).toBeInstanceOf(ProviderApiError);
    expect(error.status).toBe(expected);
  });

  it('I8 a connection error is a ProviderApiError without status', async () => {
    const failing = (async () => {
      throw new TypeError('fetch failed');
    }) as typeof fetch;
    const error = await fetchProviderPayment({ baseUrl: 'http://p.test', paymentReference: 'x', fetch: failing }).catch((e) => e);
    expect(error).toBeInstanceOf(ProviderApiError);
    expect(error.status).toBeNull();
  });
});
