// Stripe itself (I1, I8, I15), profile `scheme: stripe_api`: the `Stripe-Signature` check over the raw bytes
// (stripe.ts), genuine Stripe event objects (payment intents, charge refunds, refunds, disputes) onto the platform's
// event types, and the payments query through the official `stripe` SDK: the payment intent, its refunds and its
// disputes. `api_base_url` is the API's origin (https://api.stripe.com, or stripe-mock's http://127.0.0.1:12111);
// the API key comes from `api_key_ref` (env:NAME) and never appears in an error, a log line or a response.
import Stripe from 'stripe';
import { z } from 'zod';
import { ProfileError } from '../config/profile.js';
import { secretRef } from '../config/profile-values.js';
import type { NormalizedProviderEvent, ProviderEventType, ProviderItem, ProviderPayment } from '../shared/inbound.js';
import { amountAt, currencyAt, idAt, objectAt, ownValue, parseJsonBody, unixSecondsAt } from './payload.js';
import { STRIPE_SIGNATURE_HEADER, verifyStripeSignature } from './stripe.js';
import {
  defineScheme,
  PayloadError,
  ProviderApiError,
  type PaymentQueryOptions,
  type ProviderAdapter,
  type ProviderEntry,
} from './types.js';

/** Stripe's event types onto the platform's; any other type is acknowledged and ignored (unsupported_type). */
export const STRIPE_API_EVENT_TYPES: Readonly<Record<string, ProviderEventType>> = {
  'payment_intent.succeeded': 'payment.succeeded',
  'payment_intent.payment_failed': 'payment.failed',
  'payment_intent.canceled': 'payment.failed',
  'payment_intent.processing': 'payment.pending',
  'charge.refunded': 'refund.succeeded',
  'refund.created': 'refund.succeeded',
  // The money leaves the balance when the dispute's funds are withdrawn, not when it opens (charge.dispute.created).
  'charge.dispute.funds_withdrawn': 'chargeback.created',
};

type Json = Record<string, unknown>;

/** The refund a `charge.refunded` event is about: the newest one the charge lists, or (none listed) its total. */
function chargeRefund(charge: Json): { amount: string; id?: string } {
  const listed =
    charge.refunds === undefined || charge.refunds === null ? [] : objectAt(charge.refunds, 'body.data.object.refunds').data;
  if (!Array.isArray(listed) || listed.length === 0) return { amount: amountAt(charge, 'amount_refunded', 'body.data.object') };
  const refunds = listed.map((r, i) => objectAt(r, `body.data.object.refunds.data.${i}`));
  const newest = refunds.reduce((a, b) => (Number(b.created ?? 0) > Number(a.created ?? 0) ? b : a));
  return {
    amount: amountAt(newest, 'amount', 'body.data.object.refunds.data'),
    id: idAt(newest, 'id', 'body.data.object.refunds.data'),
  };
}

/** I1: the normalized event of a verified Stripe event object (`object: "event"`, API version of the account). */
export function extractStripeEvent(rawBody: Buffer): NormalizedProviderEvent {
  const event = objectAt(parseJsonBody(rawBody), 'body');
  const providerEventId = idAt(event, 'id', 'body');
  const providerType = typeof event.type === 'string' ? event.type : undefined;
  if (!providerType) throw new PayloadError('invalid_fields', 'body.type is required');
  const type = ownValue(STRIPE_API_EVENT_TYPES, providerType);
  if (!type)
    throw new PayloadError('unsupported_type', `event type ${JSON.stringify(providerType.slice(0, 100))} is not handled`);
  const object = objectAt(objectAt(event.data, 'body.data').object, 'body.data.object');
  const at = 'body.data.object';
  const common = {
    providerEventId,
    type,
    currency: currencyAt(object, 'currency', at),
    effectiveAt: unixSecondsAt(event, 'created', 'body'),
  };
  if (providerType.startsWith('payment_intent.')) {
    // What was captured for a success (amount_received; a partial capture is less than amount), else the amount asked.
    const amountMinor =
      providerType === 'payment_intent.succeeded' ? amountAt(object, 'amount_received', at) : amountAt(object, 'amount', at);
    return { ...common, paymentReference: idAt(object, 'id', at), amountMinor };
  }
  const paymentReference = idAt(object, 'payment_intent', at);
  if (providerType === 'charge.refunded') {
    const refund = chargeRefund(object);
    return { ...common, paymentReference, amountMinor: refund.amount, ...(refund.id ? { providerObjectId: refund.id } : {}) };
  }
  // refund.created (a Refund) and charge.dispute.funds_withdrawn (a Dispute): the object is the item itself (L1).
  return { ...common, paymentReference, amountMinor: amountAt(object, 'amount', at), providerObjectId: idAt(object, 'id', at) };
}

/** A payment intent's status as the platform reads it (I8: anything not yet final is pending, never paid). */
export function paymentStatus(intent: Pick<Stripe.PaymentIntent, 'status' | 'last_payment_error'>): ProviderPayment['status'] {
  if (intent.status === 'succeeded') return 'succeeded';
  if (intent.status === 'canceled') return 'failed';
  // After a declined attempt Stripe returns the intent to requires_payment_method with the decline attached.
  if (intent.status === 'requires_payment_method' && intent.last_payment_error) return 'failed';
  return 'pending';
}

const minor = (amount: number) => String(amount);

/** I8/L1: the payment as ProviderPayment: the intent's amount, its refunds (not failed or canceled) and disputes with funds out. */
export function toProviderPayment(
  intent: Stripe.PaymentIntent,
  refunds: readonly Stripe.Refund[],
  disputes: readonly Stripe.Dispute[],
): ProviderPayment {
  const status = paymentStatus(intent);
  return {
    reference: intent.id,
    status,
    amountMinor: minor(status === 'succeeded' ? intent.amount_received : intent.amount),
    currency: intent.currency.toUpperCase(),
    refunds: refunds
      .filter((r) => r.status !== 'failed' && r.status !== 'canceled')
      .map((r): ProviderItem => ({ id: r.id, amountMinor: minor(r.amount) })),
    // An inquiry (warning_*) moves no money; every other dispute has had its funds withdrawn.
    disputes: disputes
      .filter((d) => !d.status.startsWith('warning_'))
      .map((d): ProviderItem => ({ id: d.id, amountMinor: minor(d.amount) })),
  };
}

/** A Stripe SDK error as ProviderApiError: the status, Stripe's error type and code, never its message (it may echo the key). */
export function providerApiError(error: unknown): ProviderApiError {
  if (error instanceof Stripe.errors.StripeConnectionError)
    return new ProviderApiError('stripe unreachable (connection error or timeout)', null);
  if (error instanceof Stripe.errors.StripeError) {
    const status = typeof error.statusCode === 'number' ? error.statusCode : null;
    const code = error.code ? `, ${error.code}` : '';
    return new ProviderApiError(`stripe answered ${status ?? 'no status'} (${error.type}${code})`, status);
  }
  return new ProviderApiError(`stripe query failed: ${error instanceof Error ? error.name : typeof error}`, null);
}

export interface StripeApiOptions {
  apiKey: string;
  /** The API's origin: protocol, host and port for the SDK (its path must be /). */
  apiBaseUrl: string;
  /** Stripe API version pinned for the queries (default: the SDK's). */
  apiVersion?: string | undefined;
}

function stripeClient(options: StripeApiOptions, query: PaymentQueryOptions): Stripe {
  const url = new URL(options.apiBaseUrl);
  return new Stripe(options.apiKey, {
    ...(options.apiVersion ? { apiVersion: options.apiVersion as Stripe.LatestApiVersion } : {}),
    protocol: url.protocol === 'http:' ? 'http' : 'https',
    host: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    timeout: query.timeoutMs ?? 10_000,
    // The workflow owns the retries and their backoff (I8); the SDK makes one request.
    maxNetworkRetries: 0,
    telemetry: false,
    ...(query.fetch ? { httpClient: Stripe.createFetchHttpClient(query.fetch) } : {}),
  });
}

/** I8: the payment intent, its refunds and its disputes; null when Stripe does not know the intent (404). */
export async function queryStripePayment(
  options: StripeApiOptions,
  paymentReference: string,
  query: PaymentQueryOptions = {},
): Promise<ProviderPayment | null> {
  const stripe = stripeClient(options, query);
  try {
    const [intent, refunds, disputes] = await Promise.all([
      stripe.paymentIntents.retrieve(paymentReference),
      stripe.refunds.list({ payment_intent: paymentReference, limit: 100 }).autoPagingToArray({ limit: 1000 }),
      stripe.disputes.list({ payment_intent: paymentReference, limit: 100 }).autoPagingToArray({ limit: 1000 }),
    ]);
    return toProviderPayment(intent, refunds, disputes);
  } catch (error) {
    if (error instanceof Stripe.errors.StripeError && error.statusCode === 404) return null;
    throw providerApiError(error);
  }
}

export function createStripeApiAdapter(entry: ProviderEntry, options: Omit<StripeApiOptions, 'apiBaseUrl'>): ProviderAdapter {
  const api: StripeApiOptions = { ...options, apiBaseUrl: entry.apiBaseUrl };
  if (new URL(entry.apiBaseUrl).pathname !== '/') {
    throw new ProfileError(
      `invalid profile:\n  inbound.providers.${entry.provider}.api_base_url: must be the Stripe API's origin without a path (https://api.stripe.com)`,
    );
  }
  return {
    provider: entry.provider,
    scheme: 'stripe_api',
    receiptHeaders: [STRIPE_SIGNATURE_HEADER],
    verify: (rawBody, headers, now) => verifyStripeSignature(entry, rawBody, headers, now),
    extract: extractStripeEvent,
    queryPayment: (paymentReference, query) => queryStripePayment(api, paymentReference, query),
  };
}

/** The profile's `scheme: stripe_api`: the secret API key (restricted, read-only is enough) and an optional API version. */
export const stripeApiScheme = defineScheme({
  scheme: 'stripe_api',
  options: z.strictObject({
    api_key_ref: secretRef,
    api_version: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}(\.\w+)?$/)
      .optional(),
  }),
  create: (entry: ProviderEntry, options) =>
    createStripeApiAdapter(entry, { apiKey: options.api_key_ref, apiVersion: options.api_version }),
});
