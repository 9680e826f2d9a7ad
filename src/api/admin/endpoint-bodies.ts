// The request bodies of the webhook endpoint routes (src/api/admin/webhook-endpoints.ts): create and update, with
// M8's catalog check of event types and M11's destination type and fields (validated in depth by the type's
// description, src/outbound/destinations/, when the route runs).
import { z } from '@hono/zod-openapi';
import { CATALOG } from '../../catalog/catalog.js';
import { checkPattern } from '../../catalog/subscriptions.js';
import { DESTINATION_TYPES, ENDPOINT_ORDERINGS, SIGNATURE_SCHEMES } from '../../shared/outbound.js';

// M8: each pattern names something in the catalog (a typo is a 400 with the nearest name); * and payment.* stay.
const eventType = z
  .string()
  .max(200)
  .superRefine((pattern, ctx) => {
    const check = checkPattern(CATALOG, pattern);
    if (!check.ok) ctx.addIssue({ code: 'custom', message: check.message });
  })
  .openapi({
    description:
      'payment.succeeded (every version), payment.succeeded@1 (that version only, M9), payment.* or *; GET /event-types lists the types',
  });
const eventTypes = z.array(eventType).min(1, 'must list at least one event type (or *)').max(100);
const url = z.url({ message: 'must be an absolute URL' }).max(2048);
const description = z.string().max(500).nullable();
const ordering = z
  .enum(ENDPOINT_ORDERINGS)
  .openapi({ description: 'M3: none (default) or per_endpoint: one event at a time, in event order' });
const rateLimitPerSecond = z
  .number()
  .int()
  .min(1)
  .max(10_000)
  .nullable()
  .openapi({ description: 'M5: at most this many POSTs per second to this endpoint; null (default) = no throttle' });

const signatureScheme = z.enum(SIGNATURE_SCHEMES).openapi({
  description: 'O16: apipay (default, ApiPay-Signature) or standard (Standard Webhooks); a change applies from the next attempt',
});
const ed25519 = z
  .boolean()
  .openapi({ description: 'O17: also sign v1a (ed25519) in the standard scheme; true makes a key pair, false removes it' });

const destinationType = z
  .enum(DESTINATION_TYPES)
  .openapi({ description: 'M11: http (default: a signed POST to url), rabbitmq or kafka (publish to the destination fields)' });
const destination = z.record(z.string().max(64), z.string().max(4096)).openapi({
  description:
    'M11: the fields of a rabbitmq or kafka destination, as GET /destination-types describes them; secret fields are never returned',
});

export const createBody = z
  .strictObject({
    merchant_account: z.string().min(1).max(200),
    type: destinationType.optional(),
    url: url.optional(),
    destination: destination.optional(),
    event_types: eventTypes,
    livemode: z.boolean(),
    description: description.optional(),
    ordering: ordering.optional(),
    rate_limit_per_second: rateLimitPerSecond.optional(),
    signature_scheme: signatureScheme.optional(),
    ed25519_signing: ed25519.optional(),
  })
  .superRefine((b, ctx) => {
    const type = b.type ?? 'http';
    if (type === 'http' && b.url === undefined)
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'required for an http endpoint' });
    if (type === 'http' && b.destination !== undefined)
      ctx.addIssue({ code: 'custom', path: ['destination'], message: 'only for a rabbitmq or kafka endpoint' });
    if (type !== 'http' && b.url !== undefined)
      ctx.addIssue({ code: 'custom', path: ['url'], message: `a ${type} endpoint has destination fields, not a url` });
    if (type !== 'http' && b.destination === undefined)
      ctx.addIssue({ code: 'custom', path: ['destination'], message: `required for a ${type} endpoint` });
  })
  .openapi('CreateWebhookEndpoint');

export const updateBody = z
  .strictObject({
    url: url.optional(),
    destination: destination.optional(),
    event_types: eventTypes.optional(),
    description: description.optional(),
    ordering: ordering.optional(),
    rate_limit_per_second: rateLimitPerSecond.optional(),
    signature_scheme: signatureScheme.optional(),
    ed25519_signing: ed25519.optional(),
  })
  .refine(
    (b) => Object.values(b).some((v) => v !== undefined),
    'give at least one of url, destination, event_types, description, ordering, rate_limit_per_second, signature_scheme, ed25519_signing',
  )
  .openapi('UpdateWebhookEndpoint');
