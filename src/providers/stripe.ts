// Stripe-style scheme (I1): `Stripe-Signature: t=<unix s>,v1=<hex>[,v1=<hex>…]`, HMAC-SHA256 of "<t>.<raw body>",
// timestamps outside ±tolerance refused; any v1 may match, so the provider can sign with two secrets while it rotates.
// The sandbox's Stripe-style provider: its payments query is the ApiPay-shaped API (payments-api.ts). Stripe itself
// is stripe-api.ts (scheme `stripe_api`), which reuses this file's signature check.
import { z } from 'zod';
import type { NormalizedProviderEvent, ProviderEventType } from '../shared/inbound.js';
import { hmacSha256, safeEqual } from './crypto.js';
import { amountAt, currencyAt, idAt, objectAt, ownValue, parseJsonBody, unixSecondsAt } from './payload.js';
import { fetchProviderPayment } from './payments-api.js';
import { defineScheme, PayloadError, SignatureError, type HeaderMap, type ProviderAdapter, type ProviderEntry } from './types.js';

export const STRIPE_SIGNATURE_HEADER = 'stripe-signature';

/** Stripe event types (and the sandbox's) onto the platform's types; anything else is acknowledged and ignored. */
export const STRIPE_EVENT_TYPES: Readonly<Record<string, ProviderEventType>> = {
  'payment_intent.succeeded': 'payment.succeeded',
  'payment_intent.payment_failed': 'payment.failed',
  'payment_intent.processing': 'payment.pending',
  'refund.created': 'refund.succeeded',
  'charge.dispute.created': 'chargeback.created',
  'payment_intent.reversed': 'payment.reversed',
};

/** Types whose `data.object` is not the payment itself but points at it through `payment_intent`. */
const POINTS_AT_PAYMENT = new Set<ProviderEventType>(['refund.succeeded', 'chargeback.created']);

export interface StripeAdapterOptions {
  provider: string;
  secret: string;
  /** A8: a second secret accepted while the provider rotates. */
  previousSecret?: string | undefined;
  toleranceSeconds: number;
  /** I8: where the ApiPay-shaped payments API is (absent: the adapter only verifies and extracts). */
  apiBaseUrl?: string;
}

export function parseStripeSignatureHeader(header: string): { timestamp: number; v1: string[] } {
  let timestamp: number | undefined;
  const v1: string[] = [];
  for (const item of header.split(',')) {
    const at = item.indexOf('=');
    if (at <= 0) continue;
    const key = item.slice(0, at).trim();
    const value = item.slice(at + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) v1.push(value.toLowerCase());
  }
  if (timestamp === undefined) throw new SignatureError('malformed_signature', 'signature header has no valid t=');
  if (v1.length === 0) throw new SignatureError('malformed_signature', 'signature header has no valid v1=');
  return { timestamp, v1 };
}

/** I1/I3: the `Stripe-Signature` check over the raw bytes, shared with the real Stripe adapter (stripe-api.ts). */
export function verifyStripeSignature(options: Pick<StripeAdapterOptions, 'secret' | 'previousSecret' | 'toleranceSeconds'>, rawBody: Buffer, headers: HeaderMap, now: Date): void {
  const header = headers[STRIPE_SIGNATURE_HEADER];
  if (!header) throw new SignatureError('missing_signature', 'Stripe-Signature header is missing');
  const { timestamp, v1 } = parseStripeSignatureHeader(header);
  const expected = [options.secret, options.previousSecret].filter((s) => s !== undefined).map((s) => hmacSha256(s, `${timestamp}.`, rawBody));
  // Check every candidate against every secret, not the first match only, so timing does not reveal which matched.
  let matched = false;
  for (const candidate of v1) for (const mac of expected) matched = safeEqual(mac, Buffer.from(candidate, 'hex')) || matched;
  if (!matched) throw new SignatureError('signature_mismatch', 'no v1 signature matches');
  const age = Math.floor(now.getTime() / 1000) - timestamp;
  if (age > options.toleranceSeconds) throw new SignatureError('stale_timestamp', 'signature timestamp is outside the tolerance');
  if (-age > options.toleranceSeconds) throw new SignatureError('future_timestamp', 'signature timestamp is in the future');
}

export function createStripeAdapter(options: StripeAdapterOptions): ProviderAdapter {
  return {
    provider: options.provider,
    scheme: 'stripe',
    receiptHeaders: [STRIPE_SIGNATURE_HEADER],

    verify(rawBody: Buffer, headers: HeaderMap, now: Date): void {
      verifyStripeSignature(options, rawBody, headers, now);
    },

    extract(rawBody: Buffer): NormalizedProviderEvent {
      const event = objectAt(parseJsonBody(rawBody), 'body');
      const id = idAt(event, 'id', 'body');
      const providerType = typeof event.type === 'string' ? event.type : undefined;
      if (!providerType) throw new PayloadError('invalid_fields', 'body.type is required');
      const type = ownValue(STRIPE_EVENT_TYPES, providerType);
      if (!type) throw new PayloadError('unsupported_type', `event type ${JSON.stringify(providerType.slice(0, 100))} is not handled`);
      const object = objectAt(objectAt(event.data, 'body.data').object, 'body.data.object');
      // L1: a refund, dispute or reversal object has its own id and points at the payment; a reversal may also
      // come as the payment intent itself (no object id of its own).
      const isItem = POINTS_AT_PAYMENT.has(type) || (type === 'payment.reversed' && object.payment_intent !== undefined);
      return {
        providerEventId: id,
        type,
        paymentReference: isItem ? idAt(object, 'payment_intent', 'body.data.object') : idAt(object, 'id', 'body.data.object'),
        amountMinor: amountAt(object, 'amount', 'body.data.object'),
        currency: currencyAt(object, 'currency', 'body.data.object'),
        effectiveAt: unixSecondsAt(event, 'created', 'body'),
        ...(isItem && object.id !== undefined ? { providerObjectId: idAt(object, 'id', 'body.data.object') } : {}),
      };
    },

    async queryPayment(paymentReference, query = {}) {
      if (options.apiBaseUrl === undefined) throw new Error(`provider ${options.provider} has no api_base_url`);
      return fetchProviderPayment({ ...query, baseUrl: options.apiBaseUrl, paymentReference });
    },
  };
}

/** The profile's `scheme: stripe` (the sandbox's Stripe-style provider): no keys beyond the common ones. */
export const stripeScheme = defineScheme({
  scheme: 'stripe',
  options: z.strictObject({}),
  create: (entry: ProviderEntry) => createStripeAdapter(entry),
});
