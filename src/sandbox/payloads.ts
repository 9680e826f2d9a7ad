// The JSON each sandbox provider sends, built from a platform-level description of the event (the inverse of the
// adapters in src/providers, which map these names back).
import { randomUUID } from 'node:crypto';
import { HMAC_EVENT_TYPES, STRIPE_EVENT_TYPES } from '../providers/index.js';
import type { ProviderEventType } from '../shared/inbound.js';

export interface SandboxEvent {
  /** Provider event id; generated when absent. */
  id?: string;
  type: ProviderEventType;
  /** The payment the event is about (a refund's or dispute's own id is generated). */
  reference: string;
  amountMinor: string | number;
  currency: string;
  effectiveAt?: Date;
}

const invert = (map: Readonly<Record<string, ProviderEventType>>) =>
  Object.fromEntries(Object.entries(map).map(([provider, ours]) => [ours, provider])) as Record<ProviderEventType, string>;
const STRIPE_NAMES = invert(STRIPE_EVENT_TYPES);
const HMAC_NAMES = invert(HMAC_EVENT_TYPES);

const shortId = () => randomUUID().replaceAll('-', '').slice(0, 24);

export function stripePayload(event: SandboxEvent): { id: string; body: string } {
  const id = event.id ?? `evt_${shortId()}`;
  const pointsAtPayment = event.type === 'refund.succeeded' || event.type === 'chargeback.created';
  const object = pointsAtPayment
    ? {
        id: `${event.type === 'refund.succeeded' ? 're' : 'dp'}_${shortId()}`,
        object: event.type === 'refund.succeeded' ? 'refund' : 'dispute',
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
  const body = JSON.stringify({
    event_id: id,
    event_type: HMAC_NAMES[event.type],
    occurred_at: (event.effectiveAt ?? new Date()).toISOString(),
    payment: { reference: event.reference, amount_minor: String(event.amountMinor), currency: event.currency.toUpperCase() },
  });
  return { id, body };
}
