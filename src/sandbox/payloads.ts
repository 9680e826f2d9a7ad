// The JSON each sandbox provider sends, built from a platform-level description of the event (the inverse of the
// adapters in src/providers, which map these names back).
import { randomUUID } from 'node:crypto';
import { HMAC_EVENT_TYPES, STRIPE_EVENT_TYPES } from '../providers/index.js';
import type { ProviderEventType } from '../shared/inbound.js';

export interface SandboxEvent {
  /** Provider event id; generated when absent. */
  id?: string;
  type: ProviderEventType;
  /** The payment the event is about. */
  reference: string;
  amountMinor: string | number;
  currency: string;
  effectiveAt?: Date;
  /**
   * L1: the refund's, dispute's or reversal's own id (refund, chargeback and reversal events only): generated
   * when absent (re_…, dp_…, rv_…), left out of the body when null (a provider that sends none).
   */
  objectId?: string | null;
}

const invert = (map: Readonly<Record<string, ProviderEventType>>) =>
  Object.fromEntries(Object.entries(map).map(([provider, ours]) => [ours, provider])) as Record<ProviderEventType, string>;
const STRIPE_NAMES = invert(STRIPE_EVENT_TYPES);
const HMAC_NAMES = invert(HMAC_EVENT_TYPES);

const shortId = () => randomUUID().replaceAll('-', '').slice(0, 24);

/** The provider object each item event is about, with the prefix of its generated ids. */
const ITEM_OBJECTS: Partial<Record<ProviderEventType, { object: string; prefix: string }>> = {
  'refund.succeeded': { object: 'refund', prefix: 're' },
  'chargeback.created': { object: 'dispute', prefix: 'dp' },
  'payment.reversed': { object: 'reversal', prefix: 'rv' },
};

/** The event's object id: the given one, a generated one, or undefined (null: the provider sends none). */
export function objectIdOf(event: Pick<SandboxEvent, 'type' | 'objectId'>): string | undefined {
  const item = ITEM_OBJECTS[event.type];
  if (!item || event.objectId === null) return undefined;
  return event.objectId ?? `${item.prefix}_${shortId()}`;
}

export function stripePayload(event: SandboxEvent): { id: string; body: string } {
  const id = event.id ?? `evt_${shortId()}`;
  const item = ITEM_OBJECTS[event.type];
  const objectId = objectIdOf(event);
  const object = item
    ? {
        ...(objectId ? { id: objectId } : {}),
        object: item.object,
        payment_intent: event.reference,
        amount: Number(event.amountMinor),
        currency: event.currency.toLowerCase(),
      }
    : { id: event.reference, object: 'payment_intent', amount: Number(event.amountMinor), currency: event.currency.toLowerCase() };
  const created = Math.floor((event.effectiveAt ?? new Date()).getTime() / 1000);
  const body = JSON.stringify({ id, object: 'event', type: STRIPE_NAMES[event.type], created, livemode: false, data: { object } });
  return { id, body };
}

export function hmacPayload(event: SandboxEvent): { id: string; body: string } {
  const id = event.id ?? `hev_${shortId()}`;
  const objectId = objectIdOf(event);
  const body = JSON.stringify({
    event_id: id,
    event_type: HMAC_NAMES[event.type],
    occurred_at: (event.effectiveAt ?? new Date()).toISOString(),
    payment: { reference: event.reference, amount_minor: String(event.amountMinor), currency: event.currency.toUpperCase() },
    ...(objectId ? { object_id: objectId } : {}),
  });
  return { id, body };
}
