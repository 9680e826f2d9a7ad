// The provider adapter contract (I1): verify a webhook's raw bytes and headers, then extract a normalized event.
import type { NormalizedProviderEvent } from '../shared/inbound.js';

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

export interface ProviderAdapter {
  readonly provider: string;
  readonly scheme: 'stripe' | 'hmac';
  /** Headers kept with the receipt (lower case) so verification can be replayed from the stored bytes (I2). */
  readonly receiptHeaders: readonly string[];
  /** Throws SignatureError; `now` is injectable for tolerance tests. */
  verify(rawBody: Buffer, headers: HeaderMap, now: Date): void;
  /** Throws PayloadError. Only called on verified bytes. */
  extract(rawBody: Buffer): NormalizedProviderEvent;
}
