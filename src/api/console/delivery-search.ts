// The console's and portal's delivery search (C1, C2): the query's schema, the form, and the filter the search page,
// its CSV export and its bulk retry all read the same way. It takes what an operator has in hand: payment reference,
// event id, provider event id, merchant, endpoint, event type, status, time range.
import { html } from 'hono/html';
import { z } from 'zod';
import { OPERATOR_DATE_HINT, parseOperatorDate } from '../../shared/operator-date.js';
import { DELIVERY_STATUSES } from '../../shared/outbound.js';
import type { View } from './html.js';

const optional = <T extends z.ZodTypeAny>(schema: T) => z.preprocess((v) => (v === '' ? undefined : v), schema.optional());
const date = z
  .string()
  .transform((text, ctx) => parseOperatorDate(text) ?? (ctx.addIssue({ code: 'custom', message: OPERATOR_DATE_HINT }), z.NEVER));

export const searchSchema = z.object({
  payment_reference: optional(z.string().trim().min(1).max(200)),
  event_id: optional(z.string().regex(/^evt_[A-Za-z0-9_]{1,200}$/, 'must be an evt_… id')),
  provider_event_id: optional(z.string().regex(/^[\x21-\x7e]{1,200}$/, 'must be printable ASCII')),
  merchant_account: optional(z.string().trim().min(1).max(200)),
  endpoint_id: optional(z.string().regex(/^we_[0-9a-z]+$/, 'must be a we_… id')),
  event_type: optional(z.string().regex(/^[a-z0-9_]+(\.[a-z0-9_]+)*$/, 'must be an event type such as payment.succeeded')),
  status: optional(z.enum(DELIVERY_STATUSES)),
  from: optional(date),
  to: optional(date),
  order: optional(z.enum(['asc', 'desc'])),
  after: optional(z.string().regex(/^whd_[0-9a-z]+$/)),
});

/** The search form's fields as the service's filter (the page, its CSV export and its bulk retry read the same). */
export function deliveryFilterOf(q: z.infer<typeof searchSchema>) {
  return {
    order: q.order ?? ('desc' as const),
    ...(q.from ? { from: q.from } : {}),
    ...(q.to ? { to: q.to } : {}),
    ...(q.status ? { status: q.status } : {}),
    ...(q.endpoint_id ? { endpointId: q.endpoint_id } : {}),
    ...(q.event_id ? { eventId: q.event_id } : {}),
    ...(q.merchant_account ? { merchantAccount: q.merchant_account } : {}),
    ...(q.event_type ? { eventType: q.event_type } : {}),
    ...(q.payment_reference ? { paymentReference: q.payment_reference } : {}),
    ...(q.after ? { afterId: q.after } : {}),
  };
}

export function searchForm(view: View, q: Record<string, string>) {
  const field = (name: string, label: string, placeholder = '') =>
    html`<label>${label}<input name="${name}" value="${q[name] ?? ''}" placeholder="${placeholder}" /></label>`;
  return html`<form method="get" action="${view.base}/deliveries" class="search">
    ${field('payment_reference', 'Payment reference', 'pi_…')} ${field('event_id', 'Event id', 'evt_…')}
    ${view.surface === 'console' ? html`${field('provider_event_id', 'Provider event id')} ${field('merchant_account', 'Merchant', 'acct_…')}` : ''}
    ${field('endpoint_id', 'Endpoint', 'we_…')} ${field('event_type', 'Event type', 'payment.succeeded')}
    <label
      >Status
      <select name="status">
        <option value="">any</option>
        ${DELIVERY_STATUSES.map((s) => html`<option value="${s}" ${q.status === s ? 'selected' : ''}>${s}</option>`)}
      </select></label
    >
    ${field('from', 'From', '2026-12-01')} ${field('to', 'To', '2026-12-02')}
    <label
      >Order
      <select name="order">
        <option value="desc">newest first</option>
        <option value="asc" ${q.order === 'asc' ? 'selected' : ''}>oldest first</option>
      </select></label
    >
    <button type="submit">Search</button>
  </form>`;
}
