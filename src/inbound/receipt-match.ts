// R20: a reconciliation's event is the one its receipt holds. The receipt's raw bytes (I2) are read again by the
// provider's adapter and compared field by field with the event the run was started with; any difference (type,
// payment reference, amount, currency, time, the provider's object id) refuses the start.
import type { NormalizedProviderEvent } from '../shared/inbound.js';

const FIELDS = [
  'providerEventId',
  'type',
  'paymentReference',
  'amountMinor',
  'currency',
  'effectiveAt',
  'providerObjectId',
] as const;

function same(field: (typeof FIELDS)[number], a: unknown, b: unknown): boolean {
  if (field === 'effectiveAt')
    return typeof a === 'string' && typeof b === 'string' && Date.parse(a) === Date.parse(b) && !Number.isNaN(Date.parse(a));
  return a === b;
}

/** The fields in which `given` differs from the receipt's event (empty: the same event). */
export function eventMismatch(receipt: NormalizedProviderEvent, given: unknown): string[] {
  if (!given || typeof given !== 'object') return ['event'];
  const event = given as Record<string, unknown>;
  const differ: string[] = FIELDS.filter((field) => !same(field, receipt[field], event[field]));
  for (const key of Object.keys(event)) if (!(FIELDS as readonly string[]).includes(key)) differ.push(key);
  return differ;
}
