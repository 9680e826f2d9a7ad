// C4: the list filters an operator searches by (payment reference, merchant account, event type, provider event
// id), shared by the delivery and reconciliation lists; the same rules as the console's search form (C1).
import { z } from '@hono/zod-openapi';

const paymentReference = z.string().trim().min(1).max(200).optional().openapi({
  description:
    'C4: the payment reference (e.g. pi_…) as it appears in the event body or on the reconciliation. A19: searching deliveries by it reads event bodies, so a viewer gets 403',
  example: 'pi_3Q0abc',
});

/** Query fields of GET /webhook-deliveries beside status, endpoint and event. */
export const deliverySearchQuery = {
  payment_reference: paymentReference,
  merchant_account: z.string().trim().min(1).max(200).optional().openapi({
    description: "C4: one merchant account's deliveries; a merchant key sees only its own (another account lists nothing)",
  }),
  event_type: z
    .string()
    .regex(/^[a-z0-9_]+(\.[a-z0-9_]+)*$/, 'must be an event type such as payment.succeeded')
    .max(200)
    .optional()
    .openapi({ example: 'payment.succeeded' }),
};

/** Query fields of GET /reconciliations beside state and provider. */
export const reconciliationSearchQuery = {
  payment_reference: paymentReference,
  provider_event_id: z
    .string()
    .regex(/^[\x21-\x7e]{1,200}$/, 'must be printable ASCII, at most 200 characters')
    .optional()
    .openapi({ description: "C4: the provider's own event id (evt_… for Stripe)" }),
};

/** The service filter of a parsed delivery query, without the undefined ones (exactOptionalPropertyTypes). */
export function deliverySearch(q: {
  payment_reference?: string | undefined;
  merchant_account?: string | undefined;
  event_type?: string | undefined;
}) {
  return {
    ...(q.payment_reference !== undefined ? { paymentReference: q.payment_reference } : {}),
    ...(q.merchant_account !== undefined ? { merchantAccount: q.merchant_account } : {}),
    ...(q.event_type !== undefined ? { eventType: q.event_type } : {}),
  };
}

export function reconciliationSearch(q: { payment_reference?: string | undefined; provider_event_id?: string | undefined }) {
  return {
    ...(q.payment_reference !== undefined ? { paymentReference: q.payment_reference } : {}),
    ...(q.provider_event_id !== undefined ? { providerEventId: q.provider_event_id } : {}),
  };
}
