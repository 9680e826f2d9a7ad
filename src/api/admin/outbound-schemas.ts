// JSON shapes of the outbound admin resources (snake_case, ISO times) and the row → JSON mappers shared by routes.
import { z } from '@hono/zod-openapi';
import type { deliveries, deliveryAttempts, events, webhookEndpoints } from '../../db/schema/index.js';
import { DELIVERY_STATUSES, DESTINATION_TYPES, ENDPOINT_ORDERINGS, ENDPOINT_STATUSES, SIGNATURE_SCHEMES } from '../../shared/outbound.js';

export const errorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'validation_failed' }),
      message: z.string(),
      requestId: z.string().optional(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  })
  .openapi('Error');

/** A JSON response of an admin route: its schema and description. */
export const json = <T extends z.ZodTypeAny>(schema: T, description: string) => ({ content: { 'application/json': { schema } }, description });
const errorResponse = (description: string) => ({ content: { 'application/json': { schema: errorSchema } }, description });
export const errorResponses = {
  400: errorResponse('Invalid request; the message names the field'),
  401: errorResponse('Missing or wrong bearer token'),
  404: errorResponse('No such resource'),
} as const;
export const conflictResponse = { 409: errorResponse('The resource is not in a state that allows this') } as const;

export const idParam = (prefix: string, example: string) =>
  z.object({
    id: z
      .string()
      .regex(new RegExp(`^${prefix}_[0-9a-z]{1,64}$`), `must be a ${prefix}_… id`)
      .openapi({ param: { name: 'id', in: 'path' }, example }),
  });

const iso = z.string().openapi({ format: 'date-time' });
const isoOrNull = iso.nullable();
const toIso = (d: Date | null) => (d === null ? null : d.toISOString());

export const endpointSchema = z
  .object({
    id: z.string().openapi({ example: 'we_01jd2m3k4n5p6q7r8s9t0v1w2x' }),
    object: z.literal('webhook_endpoint'),
    merchant_account: z.string(),
    type: z.enum(DESTINATION_TYPES).openapi({ description: 'M11: http, rabbitmq or kafka' }),
    url: z.string().openapi({ description: 'The http URL, or where a broker destination publishes (amqp://host:port/vhost?queue=…, kafka://brokers/topic); never a credential' }),
    destination: z
      .record(z.string(), z.string())
      .nullable()
      .openapi({ description: "M11: a broker destination's non-secret fields (secret ones are never returned); null for http" }),
    description: z.string().nullable(),
    event_types: z.array(z.string()),
    livemode: z.boolean(),
    status: z.enum(ENDPOINT_STATUSES),
    ordering: z.enum(ENDPOINT_ORDERINGS).openapi({ description: 'M3: per_endpoint delivers one event at a time, in event order' }),
    rate_limit_per_second: z.number().int().nullable().openapi({ description: 'M5: at most this many POSTs per second; null = no throttle' }),
    signature_scheme: z.enum(SIGNATURE_SCHEMES).openapi({ description: 'O16: apipay (ApiPay-Signature) or standard (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature)' }),
    signing_public_key: z
      .string()
      .nullable()
      .openapi({ description: 'O17: whpk_… ed25519 public key that verifies the v1a signatures (standard scheme); null = HMAC v1 only' }),
    disabled_reason: z.string().nullable(),
    disabled_at: isoOrNull,
    created_at: iso,
    updated_at: iso,
  })
  .openapi('WebhookEndpoint');

export const endpointWithSecretSchema = endpointSchema
  .extend({ secret: z.string().openapi({ description: 'whsec_… signing secret. Shown only in this response: store it now.' }) })
  .openapi('WebhookEndpointWithSecret');

export function endpointJson(row: typeof webhookEndpoints.$inferSelect): z.infer<typeof endpointSchema> {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    merchant_account: row.merchantAccount,
    type: row.destinationType,
    url: row.url,
    destination: row.destinationType === 'http' ? null : (row.destinationConfig ?? {}),
    description: row.description,
    event_types: row.eventTypes,
    livemode: row.livemode,
    status: row.status,
    ordering: row.ordering,
    rate_limit_per_second: row.rateLimitPerSecond,
    signature_scheme: row.signatureScheme,
    signing_public_key: row.signingPublicKey,
    disabled_reason: row.disabledReason,
    disabled_at: toIso(row.disabledAt),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export const deliveryStatusSchema = z.enum(DELIVERY_STATUSES);

export const deliverySchema = z
  .object({
    id: z.string().openapi({ example: 'whd_01jd2m3k4n5p6q7r8s9t0v1w2x' }),
    object: z.literal('webhook_delivery'),
    event_id: z.string(),
    endpoint_id: z.string(),
    merchant_account: z.string(),
    status: deliveryStatusSchema,
    attempt_count: z.number().int(),
    next_attempt_at: isoOrNull,
    delivered_at: isoOrNull,
    failed_at: isoOrNull,
    failure_reason: z.string().nullable().openapi({ description: 'Why the cycle ended FAILED without a merchant answer (a non-retryable error, R4); null otherwise.' }),
    sequence: z.number().int().nullable().openapi({ description: "M3: place in its ordered endpoint's line; null when the endpoint was unordered" }),
    order_skipped_at: isoOrNull.openapi({ description: 'M3: when an operator let the next delivery go ahead of this one' }),
    parked_since: isoOrNull.openapi({
      description:
        "P13/P15: parked since then because its endpoint's circuit is open (or its backlog is being released): no attempt is scheduled; the endpoint's probe sends it. Null when not parked.",
    }),
    created_at: iso,
    updated_at: iso,
  })
  .openapi('WebhookDelivery');

export function deliveryJson(row: typeof deliveries.$inferSelect): z.infer<typeof deliverySchema> {
  return {
    id: row.id,
    object: 'webhook_delivery',
    event_id: row.eventPublicId,
    endpoint_id: row.endpointId,
    merchant_account: row.merchantAccount,
    status: row.status,
    attempt_count: row.attemptCount,
    next_attempt_at: toIso(row.nextAttemptAt),
    delivered_at: toIso(row.deliveredAt),
    failed_at: toIso(row.failedAt),
    failure_reason: row.failureReason,
    sequence: row.sequence,
    order_skipped_at: toIso(row.orderSkippedAt),
    parked_since: toIso(row.parkedSince),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export const attemptSchema = z
  .object({
    attempt_number: z.number().int(),
    started_at: iso,
    succeeded: z.boolean(),
    response_status: z.number().int().nullable(),
    latency_ms: z.number().int(),
    error_kind: z.string().nullable(),
    error_message: z.string().nullable(),
    response_excerpt: z.string().nullable().optional().openapi({ description: 'absent for the viewer role (A1)' }),
    retry_after_ms: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "O18: the merchant's Retry-After on a 429/503, in ms; the next attempt waited at least this (capped by the schedule's last wait)" }),
  })
  .openapi('DeliveryAttempt');

export function attemptJson(row: typeof deliveryAttempts.$inferSelect): z.infer<typeof attemptSchema> {
  return {
    attempt_number: row.attemptNumber,
    started_at: row.startedAt.toISOString(),
    succeeded: row.succeeded,
    response_status: row.responseStatus,
    latency_ms: row.latencyMs,
    error_kind: row.errorKind,
    error_message: row.errorMessage,
    response_excerpt: row.responseExcerpt,
    retry_after_ms: row.retryAfterMs,
  };
}

export const deliveryWithAttemptsSchema = deliverySchema.extend({ attempts: z.array(attemptSchema) }).openapi('WebhookDeliveryWithAttempts');

export const eventSchema = z
  .object({
    id: z.string().openapi({ example: 'evt_01jd2m3k4n5p6q7r8s9t0v1w2x' }),
    object: z.literal('event'),
    type: z.string(),
    created: z.number().int().openapi({ description: 'unix seconds, from the envelope' }),
    livemode: z.boolean(),
    merchant_account: z.string(),
    received_at: iso,
    body: z.unknown().openapi({ description: 'the exact body every delivery sends, parsed as JSON; absent for the viewer role (A1); null once expunged (O19)' }),
    expunged_at: isoOrNull.openapi({ description: 'O19: when the body was removed (retention or an admin expunge); null while it is kept' }),
    expunge_reason: z.string().nullable().openapi({ description: 'O19: `retention`, or `operator: <reason>`' }),
    deliveries: z.array(deliverySchema),
  })
  .openapi('Event');

export function eventJson(row: typeof events.$inferSelect, rows: Array<typeof deliveries.$inferSelect>): z.infer<typeof eventSchema> {
  let body: unknown = null; // O19: null once expunged
  if (row.body !== null) {
    try {
      body = JSON.parse(row.body.toString('utf8'));
    } catch {
      body = row.body.toString('utf8'); // stored bytes are what was sent; show them even if not JSON
    }
  }
  return {
    id: row.eventPublicId,
    object: 'event',
    type: row.type,
    created: row.createdUnix,
    livemode: row.livemode,
    merchant_account: row.merchantAccount,
    received_at: row.receivedAt.toISOString(),
    body,
    expunged_at: toIso(row.expungedAt),
    expunge_reason: row.expungeReason,
    deliveries: rows.map(deliveryJson),
  };
}
