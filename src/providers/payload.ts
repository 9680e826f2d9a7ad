// Strict readers for the JSON of a verified webhook: UTF-8, JSON, then fields, each failure a PayloadError that
// names what is wrong (never echoing the body).
import { PayloadError } from './types.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export function parseJsonBody(rawBody: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(rawBody);
  } catch {
    throw new PayloadError('invalid_utf8', 'body is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new PayloadError('invalid_json', `body is not valid JSON: ${(error as Error).message}`);
  }
}

type Json = Record<string, unknown>;

export function objectAt(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new PayloadError('invalid_fields', `${path} must be an object`);
  }
  return value as Json;
}

/** Ids end up in workflow ids and text columns: printable ASCII, bounded. */
const ID_PATTERN = /^[\x21-\x7e]{1,200}$/;

export function idAt(object: Json, key: string, path: string): string {
  const value = object[key];
  if (typeof value !== 'string' || !ID_PATTERN.test(value)) {
    throw new PayloadError('invalid_fields', `${path}.${key} must be a non-empty printable string of at most 200 characters`);
  }
  return value;
}

export function stringAt(object: Json, key: string, path: string): string {
  const value = object[key];
  if (typeof value !== 'string' || value.length === 0) throw new PayloadError('invalid_fields', `${path}.${key} is required`);
  return value;
}

/** The largest amount the ledger's bigint columns hold (R4): a larger one could be acknowledged but never stored. */
export const MAX_AMOUNT_MINOR = 9223372036854775807n;

/** Minor units as a decimal string: a non-negative JSON integer or a string of digits, at most MAX_AMOUNT_MINOR. */
export function amountAt(object: Json, key: string, path: string): string {
  const value = object[key];
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (typeof value === 'string' && /^(0|[1-9]\d{0,18})$/.test(value) && BigInt(value) <= MAX_AMOUNT_MINOR) return value;
  throw new PayloadError('invalid_fields', `${path}.${key} must be a non-negative integer amount in minor units, at most ${MAX_AMOUNT_MINOR}`);
}

/** R4: a provider's type name looked up in a mapping table by own keys only (never `constructor`, `__proto__`, …). */
export function ownValue<T>(map: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

/** ISO 4217, normalized to upper case (providers such as Stripe send lower case). */
export function currencyAt(object: Json, key: string, path: string): string {
  const value = object[key];
  if (typeof value !== 'string' || !/^[A-Za-z]{3}$/.test(value)) {
    throw new PayloadError('invalid_fields', `${path}.${key} must be a three-letter ISO 4217 currency code`);
  }
  return value.toUpperCase();
}

/**
 * R21: the instants a provider's timestamp may name, 1970-01-01 up to 9999-12-31T23:59:59.999Z: what every reader
 * downstream (toISOString, PostgreSQL timestamptz, ISO 8601's four-digit year) can hold. Out of it is a 400.
 */
export const MAX_EVENT_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

export function unixSecondsAt(object: Json, key: string, path: string): string {
  const value = object[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0 || value * 1000 > MAX_EVENT_TIME_MS) {
    throw new PayloadError('invalid_fields', `${path}.${key} must be a unix timestamp in seconds between 1970 and 9999`);
  }
  return new Date(value * 1000).toISOString();
}

export function isoTimeAt(object: Json, key: string, path: string): string {
  const value = object[key];
  const time = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(time) || time < 0 || time > MAX_EVENT_TIME_MS) {
    throw new PayloadError('invalid_fields', `${path}.${key} must be an ISO 8601 date-time between 1970 and 9999`);
  }
  return new Date(time).toISOString();
}
