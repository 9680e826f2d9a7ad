// C14: the names an operator reads beside a delivery's ids: the endpoint's description and URL, the event's type and
// the payment it is about (O20: data.object.payment_reference, or the id of a payment object). One bounded query per
// kind for a page's rows (primary-key lookups); the payment reference only for those who may read bodies (A1, A19).
import { inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/client.js';
import { events, webhookEndpoints } from '../db/schema/index.js';
import { paymentReferenceOf } from './envelope.js';

export interface EndpointName {
  url: string;
  description: string | null;
}

export interface EventName {
  type: string;
  paymentReference: string | null;
}

export interface DeliveryNames {
  endpoints: Map<string, EndpointName>;
  events: Map<string, EventName>;
}

export const NO_NAMES: DeliveryNames = { endpoints: new Map(), events: new Map() };

/** The largest body read for its payment reference (an envelope is a few hundred bytes to a few KiB). */
const MAX_BODY = 64 * 1024;

/** At most this many ids of each kind are looked up at once (a page holds 50). */
const MAX_IDS = 1000;

function referenceIn(body: Buffer): string | null {
  if (!Buffer.isBuffer(body)) return null;
  try {
    const object = (JSON.parse(body.toString('utf8')) as { data?: { object?: unknown } }).data?.object;
    return object && typeof object === 'object' ? (paymentReferenceOf(object as Record<string, unknown>) ?? null) : null;
  } catch {
    return null; // not JSON (never once accepted, O2): no name, the id still shows
  }
}

export async function deliveryNames(
  db: Db,
  rows: readonly { endpointId: string; eventPublicId: string }[],
  options: { paymentReferences: boolean },
): Promise<DeliveryNames> {
  const endpointIds = [...new Set(rows.map((r) => r.endpointId))].slice(0, MAX_IDS);
  const eventIds = [...new Set(rows.map((r) => r.eventPublicId))].slice(0, MAX_IDS);
  const [endpointRows, eventRows] = await Promise.all([
    endpointIds.length
      ? db
          .select({ id: webhookEndpoints.id, url: webhookEndpoints.url, description: webhookEndpoints.description })
          .from(webhookEndpoints)
          .where(inArray(webhookEndpoints.id, endpointIds))
      : [],
    eventIds.length
      ? db
          .select({
            id: events.eventPublicId,
            type: events.type,
            // Read only to find the payment it is about (paymentReferenceOf, O20); the body itself goes no further.
            // At most MAX_BODY bytes each (a page or an export chunk stays small); a longer body gets no reference.
            body: options.paymentReferences
              ? sql<Buffer | null>`case when octet_length(${events.body}) <= ${MAX_BODY} then ${events.body} end`
              : sql<null>`null`,
          })
          .from(events)
          .where(inArray(events.eventPublicId, eventIds))
      : [],
  ]);
  return {
    endpoints: new Map(endpointRows.map((e) => [e.id, { url: e.url, description: e.description }])),
    events: new Map(eventRows.map((e) => [e.id, { type: e.type, paymentReference: e.body ? referenceIn(e.body) : null }])),
  };
}
