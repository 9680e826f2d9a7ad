// Merchant-facing webhook signatures (O8–O10): `ApiPay-Signature: t=<unix s>,v1=<hex>[,v1=<hex>]`, Stripe-compatible;
// and Standard Webhooks (O16, O17: ./standard.ts). `verify` takes either scheme: the ApiPay-Signature value, or the
// request's headers (then webhook-id/-timestamp/-signature when present, else ApiPay-Signature).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { matchesStandard, STANDARD_HEADERS } from './standard.js';

export { generateSigningKeyPair, publicKeyOf, signStandard, STANDARD_HEADERS } from './standard.js';

export const SIGNATURE_HEADER = 'ApiPay-Signature';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export type WebhookVerificationReason =
  | 'missing_header'
  | 'malformed_header'
  | 'timestamp_outside_tolerance'
  | 'no_matching_signature';

/** Thrown by `verify`; `reason` is machine-readable. The message never contains a secret or a signature. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}

const toBuffer = (payload: Buffer | Uint8Array | string) =>
  typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);

/** HMAC over the exact bytes received, never a re-serialization; the whsec_… string itself is the key (O8). */
function computeSignature(payload: Buffer, secret: string, timestamp: number): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(payload).digest();
}

/**
 * The header value for one payload. One v1 per secret, in the order given: the active secret first, then the
 * ones still in their rotation grace period (O9). No key id is sent.
 */
export function sign(options: { payload: Buffer | Uint8Array | string; secrets: string[]; timestamp: number }): string {
  if (options.secrets.length === 0) throw new Error('sign: at least one secret is required');
  if (!Number.isInteger(options.timestamp) || options.timestamp < 0) throw new Error('sign: timestamp must be unix seconds');
  const payload = toBuffer(options.payload);
  const parts = options.secrets.map((secret) => `v1=${computeSignature(payload, secret, options.timestamp).toString('hex')}`);
  return [`t=${options.timestamp}`, ...parts].join(',');
}

export interface VerifyOptions {
  /** Reject timestamps older or newer than this many seconds (default 300, O10). */
  toleranceSeconds?: number;
  /** Clock, for tests: a Date, unix milliseconds, or a function returning a Date. */
  now?: Date | number | (() => Date);
}

function parseHeader(header: string): { timestamp: number; signatures: Buffer[] } {
  let timestamp: number | undefined;
  const signatures: Buffer[] = [];
  for (const element of header.split(',')) {
    const eq = element.indexOf('=');
    if (eq <= 0) throw new WebhookVerificationError('malformed_header', `${SIGNATURE_HEADER}: "${element.trim().slice(0, 8)}…" is not key=value`);
    const key = element.slice(0, eq).trim();
    const value = element.slice(eq + 1).trim();
    if (key === 't') {
      if (!/^\d{1,12}$/.test(value) || timestamp !== undefined) {
        throw new WebhookVerificationError('malformed_header', `${SIGNATURE_HEADER}: t must appear once, as unix seconds`);
      }
      timestamp = Number(value);
    } else if (key === 'v1') {
      // A v1 that is not 64 hex digits cannot match; it is skipped rather than failing the others.
      if (/^[0-9a-fA-F]{64}$/.test(value)) signatures.push(Buffer.from(value, 'hex'));
    }
    // Other schemes (v0, future versions) are ignored, as Stripe's verifier does.
  }
  if (timestamp === undefined) throw new WebhookVerificationError('malformed_header', `${SIGNATURE_HEADER}: no t= element`);
  if (signatures.length === 0) throw new WebhookVerificationError('malformed_header', `${SIGNATURE_HEADER}: no v1= signature`);
  return { timestamp, signatures };
}

function nowSeconds(now: VerifyOptions['now']): number {
  const ms = now === undefined ? Date.now() : typeof now === 'number' ? now : typeof now === 'function' ? now().getTime() : now.getTime();
  return Math.floor(ms / 1000);
}

/** Request headers as Node (`req.headers`), fetch (`Headers`) or a plain object give them. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function headerOf(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === name.toLowerCase()) return Array.isArray(value) ? value.join(' ') : value;
  }
  return undefined;
}

/** O17: a Standard Webhooks request; `keys` are whsec_ secrets (v1) and/or whpk_ public keys (v1a). */
function verifyStandard(payload: Buffer, headers: HeaderSource, keys: string[], tolerance: number, now: VerifyOptions['now']): { timestamp: number; id: string } {
  const id = headerOf(headers, STANDARD_HEADERS.id);
  const stamp = headerOf(headers, STANDARD_HEADERS.timestamp);
  const signature = headerOf(headers, STANDARD_HEADERS.signature);
  if (!id || !stamp || !signature) throw new WebhookVerificationError('missing_header', 'webhook-id, webhook-timestamp and webhook-signature are all required');
  if (!/^\d{1,12}$/.test(stamp)) throw new WebhookVerificationError('malformed_header', 'webhook-timestamp must be unix seconds');
  const timestamp = Number(stamp);
  if (Math.abs(nowSeconds(now) - timestamp) > tolerance) {
    throw new WebhookVerificationError('timestamp_outside_tolerance', `webhook-timestamp is outside the ${tolerance} s tolerance`);
  }
  if (!matchesStandard(id, timestamp, payload, signature, keys)) throw new WebhookVerificationError('no_matching_signature', 'no webhook-signature entry matches the payload');
  return { timestamp, id };
}

/**
 * Verifies a received webhook. Pass the raw body bytes exactly as received (before any JSON parsing), the
 * `ApiPay-Signature` header (or all the request's headers: either scheme), and one or more endpoint secrets
 * (several while a rotation is in progress; for Standard Webhooks' v1a, whpk_ public keys).
 * Returns the signed timestamp (and, for Standard Webhooks, the webhook-id); throws `WebhookVerificationError` otherwise.
 */
export function verify(
  rawBody: Buffer | Uint8Array | string,
  headerOrHeaders: string | HeaderSource | null | undefined,
  secrets: string | string[],
  options: VerifyOptions = {},
): { timestamp: number; id?: string } {
  const secretList = (Array.isArray(secrets) ? secrets : [secrets]).filter((s) => s.length > 0);
  if (secretList.length === 0) throw new Error('verify: at least one non-empty secret is required');
  let header: string | null | undefined;
  if (headerOrHeaders !== null && typeof headerOrHeaders === 'object') {
    if (headerOf(headerOrHeaders, STANDARD_HEADERS.signature) !== undefined) {
      return verifyStandard(toBuffer(rawBody), headerOrHeaders, secretList, options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS, options.now);
    }
    header = headerOf(headerOrHeaders, SIGNATURE_HEADER);
  } else header = headerOrHeaders;
  if (header === undefined || header === null || header.trim() === '') {
    throw new WebhookVerificationError('missing_header', `${SIGNATURE_HEADER} header is missing`);
  }
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const { timestamp, signatures } = parseHeader(header);

  // Both directions: a future timestamp is as suspicious as a stale one (replay with a skewed clock).
  if (Math.abs(nowSeconds(options.now) - timestamp) > tolerance) {
    throw new WebhookVerificationError('timestamp_outside_tolerance', `${SIGNATURE_HEADER} timestamp is outside the ${tolerance} s tolerance`);
  }

  const payload = toBuffer(rawBody);
  let matched = false;
  // Every pair is compared (no early exit), so timing reveals neither which secret nor which v1 matched.
  for (const secret of secretList) {
    const expected = computeSignature(payload, secret, timestamp);
    for (const candidate of signatures) {
      if (timingSafeEqual(expected, candidate)) matched = true;
    }
  }
  if (!matched) throw new WebhookVerificationError('no_matching_signature', `no ${SIGNATURE_HEADER} v1 signature matches the payload`);
  return { timestamp };
}
