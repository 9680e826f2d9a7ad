// The provider adapter contract (I1, I8, I15): verify a webhook's raw bytes and headers, extract a normalized event,
// and ask the provider's own API for the authoritative state of a payment. A scheme (`ProviderScheme`) is one file:
// the keys of its profile entry and the factory of its adapter; the registry (index.ts) lists the schemes.
import type { z } from 'zod';
import type { NormalizedProviderEvent, ProviderPayment } from '../shared/inbound.js';

/** Request headers with lower-case names, as Hono's `c.req.header()` returns them. */
export type HeaderMap = Readonly<Record<string, string | undefined>>;

export type SignatureFailure =
  | 'missing_signature'
  | 'malformed_signature'
  | 'signature_mismatch'
  | 'stale_timestamp'
  | 'future_timestamp';

/** The request is not from the provider (I3): 401 and nothing stored. The reason goes to metrics, not to the caller. */
export class SignatureError extends Error {
  override name = 'SignatureError';
  constructor(readonly reason: SignatureFailure, message: string) {
    super(message);
  }
}

export type PayloadFailure = 'invalid_utf8' | 'invalid_json' | 'invalid_fields' | 'unsupported_type';

/** The provider signed something we cannot read: 400 (or 200 ignored for unsupported types), nothing stored. */
export class PayloadError extends Error {
  override name = 'PayloadError';
  constructor(readonly reason: PayloadFailure, message: string) {
    super(message);
  }
}

/** I8: the provider's API did not answer (null status: connection error, timeout) or answered an error. */
export class ProviderApiError extends Error {
  override name = 'ProviderApiError';
  constructor(
    message: string,
    /** HTTP status, or null for a connection error or timeout. */
    readonly status: number | null,
    readonly bodyExcerpt = '',
  ) {
    super(message);
  }
}

/** What the caller of a payments query may inject: the HTTP client (tests fake the peer) and the time limit. */
export interface PaymentQueryOptions {
  fetch?: typeof fetch | undefined;
  timeoutMs?: number | undefined;
}

export interface ProviderAdapter {
  readonly provider: string;
  /** The scheme's name in the profile (`stripe`, `hmac`, `stripe_api`, …). */
  readonly scheme: string;
  /** Headers kept with the receipt (lower case) so verification can be replayed from the stored bytes (I2). */
  readonly receiptHeaders: readonly string[];
  /** Throws SignatureError; `now` is injectable for tolerance tests. */
  verify(rawBody: Buffer, headers: HeaderMap, now: Date): void;
  /** Throws PayloadError. Only called on verified bytes. */
  extract(rawBody: Buffer): NormalizedProviderEvent;
  /**
   * I8: the provider's authoritative payment, or null when it does not know it (yet). Throws ProviderApiError when
   * the provider is unreachable or answers an error; never includes a credential in the error.
   */
  queryPayment(paymentReference: string, options?: PaymentQueryOptions): Promise<ProviderPayment | null>;
}

/** The keys every provider entry of the profile has (src/config/profile.ts), secrets already resolved. */
export interface ProviderEntry {
  provider: string;
  secret: string;
  /** A8: a second secret accepted while the provider rotates. */
  previousSecret?: string | undefined;
  toleranceSeconds: number;
  apiBaseUrl: string;
}

/**
 * I15: one way of talking to a provider. `options` validates the keys of a profile entry beyond the common ones
 * (strict: an unknown key is refused), `create` builds the adapter. Adding a provider with a new scheme is its file
 * exporting one of these and its line in `SCHEMES` (index.ts); a provider on an existing scheme is a profile entry.
 */
export interface ProviderScheme<Options extends z.ZodType = z.ZodType> {
  readonly scheme: string;
  readonly options: Options;
  create(entry: ProviderEntry, options: z.output<Options>): ProviderAdapter;
}

/** Declares a scheme with its options' type inferred (a plain object literal would widen it). */
export const defineScheme = <Options extends z.ZodType>(scheme: ProviderScheme<Options>): ProviderScheme<Options> => scheme;
