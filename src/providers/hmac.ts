// Generic HMAC scheme (I1): one HMAC-SHA256 of the raw body, hex or base64, in a header named by the profile.
// No timestamp is signed, so a captured request can be replayed; that is harmless because the registry keeps
// every event id forever (I5): a replay is an identical event id and is acknowledged as a duplicate.
import { z } from 'zod';
import type { NormalizedProviderEvent, ProviderEventType } from '../shared/inbound.js';
import { hmacSha256, safeEqual } from './crypto.js';
import { amountAt, currencyAt, idAt, isoTimeAt, objectAt, ownValue, parseJsonBody, stringAt } from './payload.js';
import { fetchProviderPayment } from './payments-api.js';
import { defineScheme, PayloadError, SignatureError, type HeaderMap, type ProviderAdapter, type ProviderEntry } from './types.js';

/** The sandbox HMAC provider's event types onto the platform's. */
export const HMAC_EVENT_TYPES: Readonly<Record<string, ProviderEventType>> = {
  'payment.captured': 'payment.succeeded',
  'payment.declined': 'payment.failed',
  'payment.pending': 'payment.pending',
  'refund.completed': 'refund.succeeded',
  'chargeback.opened': 'chargeback.created',
  'payment.reversed': 'payment.reversed',
};

const ITEM_TYPES = new Set<ProviderEventType>(['refund.succeeded', 'chargeback.created', 'payment.reversed']);

export interface HmacAdapterOptions {
  provider: string;
  secret: string;
  /** A8: a second secret accepted while the provider rotates. */
  previousSecret?: string | undefined;
  header: string;
  encoding: 'hex' | 'base64';
  /** I8: where the ApiPay-shaped payments API is (absent: the adapter only verifies and extracts). */
  apiBaseUrl?: string;
}

const SIGNATURE_SHAPE = { hex: /^[0-9a-fA-F]{64}$/, base64: /^[A-Za-z0-9+/]{43}=$/ } as const;

export function createHmacAdapter(options: HmacAdapterOptions): ProviderAdapter {
  const headerName = options.header.toLowerCase();
  return {
    provider: options.provider,
    scheme: 'hmac',
    receiptHeaders: [headerName],

    verify(rawBody: Buffer, headers: HeaderMap): void {
      const received = headers[headerName]?.trim();
      if (!received) throw new SignatureError('missing_signature', `${options.header} header is missing`);
      // A strict shape first: Buffer.from() silently skips bad characters, which would loosen the comparison.
      if (!SIGNATURE_SHAPE[options.encoding].test(received)) {
        throw new SignatureError('malformed_signature', `${options.header} is not a ${options.encoding} HMAC-SHA256`);
      }
      const signature = Buffer.from(received, options.encoding);
      let matched = false;
      for (const secret of [options.secret, options.previousSecret]) if (secret !== undefined) matched = safeEqual(hmacSha256(secret, rawBody), signature) || matched;
      if (!matched) {
        throw new SignatureError('signature_mismatch', 'signature does not match');
      }
    },

    extract(rawBody: Buffer): NormalizedProviderEvent {
      const event = objectAt(parseJsonBody(rawBody), 'body');
      const providerType = stringAt(event, 'event_type', 'body');
      const type = ownValue(HMAC_EVENT_TYPES, providerType);
      if (!type) throw new PayloadError('unsupported_type', `event type ${JSON.stringify(providerType.slice(0, 100))} is not handled`);
      const payment = objectAt(event.payment, 'body.payment');
      return {
        providerEventId: idAt(event, 'event_id', 'body'),
        type,
        paymentReference: idAt(payment, 'reference', 'body.payment'),
        amountMinor: amountAt(payment, 'amount_minor', 'body.payment'),
        currency: currencyAt(payment, 'currency', 'body.payment'),
        effectiveAt: isoTimeAt(event, 'occurred_at', 'body'),
        // L1: the refund's, chargeback's or reversal's own id, where the provider sends one.
        ...(ITEM_TYPES.has(type) && event.object_id !== undefined ? { providerObjectId: idAt(event, 'object_id', 'body') } : {}),
      };
    },

    async queryPayment(paymentReference, query = {}) {
      if (options.apiBaseUrl === undefined) throw new Error(`provider ${options.provider} has no api_base_url`);
      return fetchProviderPayment({ ...query, baseUrl: options.apiBaseUrl, paymentReference });
    },
  };
}

/** The profile's `scheme: hmac`: the header that carries the signature and its encoding. */
export const hmacScheme = defineScheme({
  scheme: 'hmac',
  options: z.strictObject({ header: z.string().min(1), encoding: z.enum(['hex', 'base64']) }),
  create: (entry: ProviderEntry, options) => createHmacAdapter({ ...entry, ...options }),
});
