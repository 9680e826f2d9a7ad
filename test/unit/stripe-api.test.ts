// I15: the real Stripe adapter (src/providers/stripe-api.ts): signatures made by Stripe's own library, genuine
// Stripe event objects (fixtures in Stripe's documented shape), a property test of the parser, and the payments
// query through the official SDK against a faked HTTP peer (the integration test runs it against stripe-mock).
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createProviderRegistry, SCHEMES } from '../../src/providers/index.js';
import {
  createStripeApiAdapter,
  extractStripeEvent,
  paymentStatus,
  STRIPE_API_EVENT_TYPES,
} from '../../src/providers/stripe-api.js';
import { defineScheme, PayloadError, ProviderApiError, SignatureError } from '../../src/providers/types.js';
import { reasonOf } from '../helpers/provider-refusal.js';

const SECRET = 'whsec_stripe_api_unit_0123456789';
const API_KEY = 'sk_test_unit_NEVER_LOGGED_4f1c9e2a';
const entry = { provider: 'stripe', secret: SECRET, toleranceSeconds: 300, apiBaseUrl: 'http://stripe.test' };
const adapter = createStripeApiAdapter(entry, { apiKey: API_KEY });
const fixture = (name: string) => readFileSync(`test/fixtures/stripe/${name}.json`);
const NOW = new Date('2026-12-04T12:00:00Z');
const T = Math.floor(NOW.getTime() / 1000);
const stripe = new Stripe('sk_test_x');

describe('I15 Stripe adapter: signatures', () => {
  const raw = fixture('payment_intent.succeeded');

  it("I15 accepts the header Stripe's library makes (generateTestHeaderString), as stripe.webhooks.constructEvent does", () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload: raw.toString(), secret: SECRET, timestamp: T });
    expect(reasonOf(() => adapter.verify(raw, { 'stripe-signature': header }, NOW))).toBeUndefined();
    // Cross-check: Stripe's own verifier agrees on the same bytes and header.
    expect(stripe.webhooks.constructEvent(raw, header, SECRET, 1e9).id).toBe('evt_3QaZ1pB7WZ01zgkW1sUcc3Ld');
  });

  it.each([
    [
      'another secret',
      () => stripe.webhooks.generateTestHeaderString({ payload: raw.toString(), secret: 'whsec_other', timestamp: T }),
      'signature_mismatch',
    ],
    [
      'stale',
      () => stripe.webhooks.generateTestHeaderString({ payload: raw.toString(), secret: SECRET, timestamp: T - 301 }),
      'stale_timestamp',
    ],
    [
      'one byte changed',
      () =>
        stripe.webhooks.generateTestHeaderString({
          payload: raw.toString().replace('2000', '2001'),
          secret: SECRET,
          timestamp: T,
        }),
      'signature_mismatch',
    ],
  ])('I3 refuses a header signed with %s', (_name, header, reason) => {
    expect(reasonOf(() => adapter.verify(raw, { 'stripe-signature': header() }, NOW))).toBe(reason);
  });

  it('I3 refuses a missing header', () => expect(reasonOf(() => adapter.verify(raw, {}, NOW))).toBe('missing_signature'));
});

describe('I15 Stripe adapter: genuine event objects', () => {
  it.each([
    [
      'payment_intent.succeeded',
      { type: 'payment.succeeded', paymentReference: 'pi_3QaZ1pB7WZ01zgkW1Hx9Qf2A', amountMinor: '2000' },
    ],
    // The newest refund the charge lists (500), not the charge's running total (1500).
    [
      'charge.refunded',
      {
        type: 'refund.succeeded',
        paymentReference: 'pi_3QaZ1pB7WZ01zgkW1Hx9Qf2A',
        amountMinor: '500',
        providerObjectId: 're_3QaZ1pB7WZ01zgkW1K0aPq9z',
      },
    ],
    [
      'refund.created',
      {
        type: 'refund.succeeded',
        paymentReference: 'pi_3QaZ1pB7WZ01zgkW1Hx9Qf2A',
        amountMinor: '500',
        providerObjectId: 're_3QaZ1pB7WZ01zgkW1K0aPq9z',
      },
    ],
    [
      'charge.dispute.funds_withdrawn',
      {
        type: 'chargeback.created',
        paymentReference: 'pi_3QaZ1pB7WZ01zgkW1Hx9Qf2A',
        amountMinor: '2000',
        providerObjectId: 'dp_1QaZ9kB7WZ01zgkWd8Yv3Rt1',
      },
    ],
  ])('I15 %s maps onto the platform event', (name, expected) => {
    const raw = fixture(name);
    const event = JSON.parse(raw.toString());
    expect(adapter.extract(raw)).toEqual({
      providerEventId: event.id,
      currency: 'EUR',
      effectiveAt: new Date(event.created * 1000).toISOString(),
      ...expected,
    });
  });

  it('I15 a charge.refunded without its refunds list stands for its refunded total, matched by amount (L1)', () => {
    const event = JSON.parse(fixture('charge.refunded').toString());
    delete event.data.object.refunds;
    const got = extractStripeEvent(Buffer.from(JSON.stringify(event)));
    expect(got.amountMinor).toBe('1500');
    expect(got.providerObjectId).toBeUndefined();
  });

  it('I15 an event type the platform does not map is unsupported (acknowledged, ignored)', () => {
    const event = JSON.parse(fixture('payment_intent.succeeded').toString());
    event.type = 'charge.dispute.created';
    expect(reasonOf(() => adapter.extract(Buffer.from(JSON.stringify(event))))).toBe('unsupported_type');
  });

  const stripeId = (prefix: string) => fc.stringMatching(/^[A-Za-z0-9]{8,40}$/).map((s) => `${prefix}_${s}`);
  it('I15 property: a well-formed event of any mapped type extracts its own fields; any other JSON is a PayloadError', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...Object.keys(STRIPE_API_EVENT_TYPES)),
        stripeId('evt'),
        stripeId('pi'),
        stripeId('re'),
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        fc.constantFrom('eur', 'usd', 'jpy', 'GBP'),
        fc.integer({ min: 1, max: 253_402_300_799 }),
        (type, id, pi, item, amount, currency, created) => {
          const isIntent = type.startsWith('payment_intent.');
          const object = isIntent
            ? { id: pi, object: 'payment_intent', amount, amount_received: amount, currency }
            : { id: item, object: 'x', amount, amount_refunded: amount, currency, payment_intent: pi };
          const got = extractStripeEvent(Buffer.from(JSON.stringify({ id, object: 'event', type, created, data: { object } })));
          expect(got).toMatchObject({
            providerEventId: id,
            type: STRIPE_API_EVENT_TYPES[type],
            paymentReference: pi,
            amountMinor: String(amount),
            currency: currency.toUpperCase(),
          });
          expect(got.providerObjectId).toBe(isIntent || type === 'charge.refunded' ? undefined : item);
        },
      ),
    );
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        try {
          extractStripeEvent(Buffer.from(JSON.stringify(value)));
        } catch (error) {
          expect(error).toBeInstanceOf(PayloadError);
        }
      }),
    );
  });
});

/** A faked Stripe API: answers by path; records the requests (to check the key is sent only as authorization). */
function fakeStripe(routes: Record<string, [number, unknown]>, seen: { url: string; auth: string | null }[] = []): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    seen.push({ url: url.toString(), auth: new Headers(init?.headers).get('authorization') });
    const [status, body] = routes[url.pathname] ?? [
      404,
      { error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such object' } },
    ];
    return new Response(JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json', 'request-id': 'req_fake' },
    });
  }) as typeof fetch;
}
const list = (data: unknown[]) => ({ object: 'list', data, has_more: false, url: '/v1/x' });
const intent = {
  id: 'pi_1',
  object: 'payment_intent',
  status: 'succeeded',
  amount: 2000,
  amount_received: 1800,
  currency: 'eur',
  last_payment_error: null,
};

describe('I15 Stripe adapter: the payments query through the SDK', () => {
  it('I8 the intent, its refunds (not failed) and its disputes (not inquiries) as the provider payment', async () => {
    const seen: { url: string; auth: string | null }[] = [];
    const fetch = fakeStripe(
      {
        '/v1/payment_intents/pi_1': [200, intent],
        '/v1/refunds': [
          200,
          list([
            { id: 're_1', amount: 300, status: 'succeeded' },
            { id: 're_2', amount: 50, status: 'failed' },
          ]),
        ],
        '/v1/disputes': [
          200,
          list([
            { id: 'dp_1', amount: 1800, status: 'lost' },
            { id: 'dp_2', amount: 1800, status: 'warning_needs_response' },
          ]),
        ],
      },
      seen,
    );
    expect(await adapter.queryPayment('pi_1', { fetch })).toEqual({
      reference: 'pi_1',
      status: 'succeeded',
      amountMinor: '1800',
      currency: 'EUR',
      refunds: [{ id: 're_1', amountMinor: '300' }],
      disputes: [{ id: 'dp_1', amountMinor: '1800' }],
    });
    expect(seen.map((s) => new URL(s.url).pathname).sort()).toEqual(['/v1/disputes', '/v1/payment_intents/pi_1', '/v1/refunds']);
    expect(seen.every((s) => s.auth === `Bearer ${API_KEY}` && !s.url.includes(API_KEY))).toBe(true);
    expect(seen.find((s) => s.url.includes('/v1/refunds'))?.url).toContain('payment_intent=pi_1');
  });

  it('I8 an intent Stripe does not know is null (unknown), not an error', async () => {
    expect(await adapter.queryPayment('pi_missing', { fetch: fakeStripe({}) })).toBeNull();
  });

  it.each([
    [500, 'api_error', 500],
    [429, 'rate_limit_error', 429],
    [401, 'authentication_error', 401],
  ])('I8 Stripe answering %i is a ProviderApiError with that status and without the key', async (status, type, expected) => {
    // Stripe's own message for a bad key repeats (part of) it: the error must not carry Stripe's message.
    const body = { error: { type, message: `Invalid API Key provided: ${API_KEY}` } };
    const error = await adapter
      .queryPayment('pi_1', {
        fetch: fakeStripe({
          '/v1/payment_intents/pi_1': [status, body],
          '/v1/refunds': [200, list([])],
          '/v1/disputes': [200, list([])],
        }),
      })
      .catch((e) => e);
    expect(error).toBeInstanceOf(ProviderApiError);
    expect(error.status).toBe(expected);
    expect(`${error.message} ${error.bodyExcerpt} ${JSON.stringify(error)}`).not.toContain('NEVER_LOGGED');
  });

  it('I8 an unreachable Stripe is a ProviderApiError without status', async () => {
    const refusing = (async () => {
      throw new TypeError('fetch failed');
    }) as typeof fetch;
    const error = await adapter.queryPayment('pi_1', { fetch: refusing }).catch((e) => e);
    expect(error).toBeInstanceOf(ProviderApiError);
    expect(error.status).toBeNull();
  });

  it.each([
    ['succeeded', null, 'succeeded'],
    ['processing', null, 'pending'],
    ['requires_action', null, 'pending'],
    ['requires_payment_method', null, 'pending'],
    ['requires_payment_method', { type: 'card_error' }, 'failed'],
    ['canceled', null, 'failed'],
  ] as const)('I8 a %s intent (last error %j) reads as %s', (status, lastError, expected) => {
    expect(paymentStatus({ status, last_payment_error: lastError as Stripe.PaymentIntent.LastPaymentError | null })).toBe(
      expected,
    );
  });
});

describe('I15 a provider is its scheme file plus its profile entry', () => {
  it('I15 a stripe_api profile entry builds the Stripe adapter through the registry; an unknown key is refused', () => {
    process.env.STRIPE_UNIT_API_KEY = API_KEY;
    const base = { secret_ref: SECRET, tolerance_seconds: 300, api_base_url: 'http://127.0.0.1:12111', livemode: false };
    const registry = createProviderRegistry({
      stripe: { scheme: 'stripe_api', ...base, api_key_ref: 'env:STRIPE_UNIT_API_KEY' },
    });
    expect(registry.get('stripe')?.scheme).toBe('stripe_api');
    expect(() =>
      createProviderRegistry({ stripe: { scheme: 'stripe_api', ...base, api_key_ref: 'env:STRIPE_UNIT_API_KEY', header: 'x' } }),
    ).toThrow(/inbound\.providers\.stripe\.header/);
    expect(() => createProviderRegistry({ stripe: { scheme: 'stripe_api', ...base } })).toThrow(
      /inbound\.providers\.stripe\.api_key_ref/,
    );
    expect(() =>
      createProviderRegistry({
        stripe: {
          scheme: 'stripe_api',
          ...base,
          api_base_url: 'http://127.0.0.1:12111/v1',
          api_key_ref: 'env:STRIPE_UNIT_API_KEY',
        },
      }),
    ).toThrow(/api_base_url: must be the Stripe API's origin/);
  });

  it('I15 a scheme declared in one file (here) serves its provider by the profile entry alone: keys, verify, extract, query', async () => {
    const echo = defineScheme({
      scheme: 'echo',
      options: z.strictObject({ token: z.string().min(1) }),
      create: (entry, options) => ({
        provider: entry.provider,
        scheme: 'echo',
        receiptHeaders: ['x-echo'],
        verify: (_raw, headers) => {
          if (headers['x-echo'] !== options.token) throw new SignatureError('signature_mismatch', 'no');
        },
        extract: (raw) => ({ ...JSON.parse(raw.toString()), effectiveAt: NOW.toISOString() }),
        queryPayment: async (reference) => ({ reference, status: 'succeeded', amountMinor: '1', currency: 'EUR' }),
      }),
    });
    const base = { secret_ref: SECRET, tolerance_seconds: 300, api_base_url: 'http://127.0.0.1:1', livemode: false };
    const registry = createProviderRegistry({ e: { scheme: 'echo', ...base, token: 't' } }, [...SCHEMES, echo]);
    const adapter = registry.get('e')!;
    expect(reasonOf(() => adapter.verify(Buffer.from('{}'), { 'x-echo': 't' }, NOW))).toBeUndefined();
    expect(reasonOf(() => adapter.verify(Buffer.from('{}'), { 'x-echo': 'u' }, NOW))).toBe('signature_mismatch');
    expect(await adapter.queryPayment('p1')).toMatchObject({ reference: 'p1', status: 'succeeded' });
    // Without its line in the scheme list the entry names an unknown scheme, and the message lists the known ones.
    expect(() => createProviderRegistry({ e: { scheme: 'echo', ...base, token: 't' } })).toThrow(
      /unknown scheme "echo" \(known: stripe, hmac, stripe_api\)/,
    );
  });
});
