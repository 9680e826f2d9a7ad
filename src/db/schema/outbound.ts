// Outbound delivery tables (requirements §2): endpoints, their encrypted secrets, events, deliveries, attempts, quarantine.
import {
  bigint,
  bigserial,
  boolean,
  customType,
  index,
  integer,
  jsonb,
  pgEnum,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { sql } from 'drizzle-orm';
import { DELIVERY_STATUSES, DESTINATION_TYPES, ENDPOINT_ORDERINGS, ENDPOINT_STATUSES, SIGNATURE_SCHEMES } from '../../shared/outbound.js';

/** Raw bytes, kept exactly: the body every attempt sends (O4) and quarantined Kafka values (O2). */
export const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

/** A PostgreSQL 64-bit transaction id, read and written as its decimal text (M7's stream cursor). */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' });

export const endpointStatus = pgEnum('endpoint_status', ENDPOINT_STATUSES);
export const deliveryStatus = pgEnum('delivery_status', DELIVERY_STATUSES);

export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(), // we_…
    merchantAccount: text('merchant_account').notNull(),
    url: text('url').notNull(),
    description: text('description'),
    eventTypes: text('event_types').array().notNull(), // ['*'] subscribes to every type
    livemode: boolean('livemode').notNull(),
    status: endpointStatus('status').notNull().default('enabled'),
    disabledReason: text('disabled_reason'),
    disabledAt: timestamp('disabled_at', { withTimezone: true }),
    /** O13: first failure of the current unbroken failure streak; null after any 2xx. */
    failingSince: timestamp('failing_since', { withTimezone: true }),
    /** M2: failed attempts since the last 2xx; at outbound.lanes.slow_after_failures the endpoint uses the slow lane. */
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    /** M3: per_endpoint = each delivery's first attempt waits for the previous delivery to finish. */
    ordering: text('ordering', { enum: ENDPOINT_ORDERINGS }).notNull().default('none'),
    /** M3: the last sequence number given to a delivery of this endpoint. */
    orderSequence: bigint('order_sequence', { mode: 'number' }).notNull().default(0),
    /** M5: at most this many POSTs per second; null = unthrottled. */
    rateLimitPerSecond: integer('rate_limit_per_second'),
    /** M5: the next free send slot of a throttled endpoint. */
    throttleNextAt: timestamp('throttle_next_at', { withTimezone: true }),
    /** M5: the send time given to the last POST (POSTs are spaced 1/rate apart at send time too). */
    throttleSentAt: timestamp('throttle_sent_at', { withTimezone: true }),
    /** O18: after a 429 the endpoint is sent at most this many POSTs per second (M5) until backoff_until. */
    backoffRatePerSecond: integer('backoff_rate_per_second'),
    backoffUntil: timestamp('backoff_until', { withTimezone: true }),
    /** P12: when the endpoint answered 2xx again after an outage of outbound.recovery.ramp_after; its send rate ramps from here. */
    recoveringSince: timestamp('recovering_since', { withTimezone: true }),
    /** O16: apipay (ApiPay-Signature, default) or standard (Standard Webhooks); applies from the next attempt. */
    signatureScheme: text('signature_scheme', { enum: SIGNATURE_SCHEMES }).notNull().default('apipay'),
    /** O17: the whpk_ key of the active ed25519 signing key; null = no v1a signatures. Public, shown freely. */
    signingPublicKey: text('signing_public_key'),
    /** M11: where attempts go: http (a signed POST to url), rabbitmq or kafka (src/outbound/destinations/). */
    destinationType: text('destination_type', { enum: DESTINATION_TYPES }).notNull().default('http'),
    /** M11: the destination's non-secret settings (host, topic, …), as its description names them; null for http. */
    destinationConfig: jsonb('destination_config').$type<Record<string, string>>(),
    /** M11: the secret settings (passwords) as JSON, AES-256-GCM sealed like endpoint secrets; never returned or audited. */
    destinationCredentials: bytea('destination_credentials'),
    destinationCredentialsKeyId: text('destination_credentials_key_id'),
    /** Soft delete: deliveries keep referencing the endpoint (history stays queryable); a deleted one is also disabled. */
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('webhook_endpoints_merchant_idx').on(t.merchantAccount, t.livemode)],
);

export const endpointSecrets = pgTable(
  'endpoint_secrets',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    endpointId: text('endpoint_id').notNull().references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    /** AES-256-GCM of the whsec_… string: iv(12) | tag(16) | ciphertext; associated data: the endpoint id (A8). */
    ciphertext: bytea('ciphertext').notNull(),
    /** A8: id of the master key that sealed it; null for rows from before key ids (no associated data). */
    keyId: text('key_id'),
    /** O17: hmac (a whsec_ secret) or ed25519 (a whsk_ signing key). */
    kind: text('kind', { enum: ['hmac', 'ed25519'] }).notNull().default('hmac'),
    createdAt: createdAt(),
    /** null while active; a rotated-out secret is still signed with until this time (O9). */
    expiresAt: timestamp('expires_at', { withTimezone: true }),
  },
  (t) => [index('endpoint_secrets_endpoint_idx').on(t.endpointId, t.createdAt)],
);

export const events = pgTable(
  'events',
  {
    eventPublicId: text('event_public_id').primaryKey(), // evt_… (O3)
    merchantAccount: text('merchant_account').notNull(),
    type: text('type').notNull(),
    livemode: boolean('livemode').notNull(),
    createdUnix: bigint('created_unix', { mode: 'number' }).notNull(),
    /** O4: serialized once, sent byte-identically by every attempt to every endpoint. O19: null once expunged. */
    body: bytea('body'),
    sourceTopic: text('source_topic'),
    sourcePartition: integer('source_partition'),
    sourceOffset: text('source_offset'),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    /** M7: the writing transaction (default pg_current_xact_id()), the order `apipay listen` streams in. */
    streamXid: xid8('stream_xid'),
    /** O19: when the body was removed (retention sweep or an admin's expunge), and why. */
    expungedAt: timestamp('expunged_at', { withTimezone: true }),
    expungeReason: text('expunge_reason'),
    /** R18: the Kafka message's W3C traceparent: the trace its deliveries belong to (the console links to it). */
    traceparent: text('traceparent'),
  },
  (t) => [
    index('events_merchant_idx').on(t.merchantAccount, t.receivedAt),
    index('events_stream_idx').on(t.merchantAccount, t.streamXid),
    index('events_retention_idx').on(t.receivedAt).where(sql`expunged_at IS NULL`),
  ],
);

export const deliveries = pgTable(
  'deliveries',
  {
    id: text('id').primaryKey(), // whd_…, also the workflow id (O6)
    eventPublicId: text('event_public_id').notNull().references(() => events.eventPublicId),
    endpointId: text('endpoint_id').notNull().references(() => webhookEndpoints.id),
    merchantAccount: text('merchant_account').notNull(),
    status: deliveryStatus('status').notNull().default('PENDING'),
    attemptCount: integer('attempt_count').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
    deliveredAt: timestamp('delivered_at', { withTimezone: true }),
    failedAt: timestamp('failed_at', { withTimezone: true }),
    /** R4: why a cycle stopped without a merchant answer (a non-retryable error, e.g. no signing secret). */
    failureReason: text('failure_reason'),
    /** M3: the delivery's place in its ordered endpoint's sequence; null when the endpoint was unordered at fan-out. */
    sequence: bigint('sequence', { mode: 'number' }),
    /** M3: an operator let the next delivery go ahead without waiting for this one. */
    orderSkippedAt: timestamp('order_skipped_at', { withTimezone: true }),
    /** P1: batched mode — set at fan-out, cleared once DELIVERED or the workflow started; the sweep reads it. */
    handoffSince: timestamp('handoff_since', { withTimezone: true }),
    /** P13: fanned out while its endpoint's circuit was open; no workflow until the endpoint's probe releases it. */
    parkedSince: timestamp('parked_since', { withTimezone: true }),
    /** P15/R20: the parked retry's attempt number the probe released (written before its signal); see drizzle/0039. */
    releasedAttempt: integer('released_attempt'),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('deliveries_event_endpoint_uq').on(t.eventPublicId, t.endpointId),
    index('deliveries_status_idx').on(t.status, t.id),
    index('deliveries_endpoint_idx').on(t.endpointId, t.id),
    index('deliveries_endpoint_sequence_idx').on(t.endpointId, t.sequence).where(sql`sequence is not null`),
    index('deliveries_handoff_idx').on(t.handoffSince).where(sql`handoff_since IS NOT NULL`),
    index('deliveries_parked_idx').on(t.endpointId, t.createdAt).where(sql`parked_since IS NOT NULL`),
    // P14: a merchant's deliveries in id order (the portal, a merchant key's list, the outage charts' counts).
    index('deliveries_merchant_idx').on(t.merchantAccount, t.id),
  ],
);

export const deliveryAttempts = pgTable(
  'delivery_attempts',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    deliveryId: text('delivery_id').notNull().references(() => deliveries.id),
    attemptNumber: integer('attempt_number').notNull(),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    responseStatus: integer('response_status'),
    latencyMs: integer('latency_ms').notNull(),
    succeeded: boolean('succeeded').notNull(),
    /** null on success; timeout | connection | redirect | client_error | server_error | unsafe_url | … */
    errorKind: text('error_kind'),
    errorMessage: text('error_message'),
    responseExcerpt: text('response_excerpt'),
    /** O18: what a 429/503's Retry-After asked for (ms from the answer); null when it sent none. */
    retryAfterMs: integer('retry_after_ms'),
    /** C12: the delivery's endpoint, filled by a trigger on insert (migration 0028) for the charts' index. */
    endpointId: text('endpoint_id'),
  },
  // O7: an attempt number is recorded once, even when the activity that made it is retried.
  (t) => [
    uniqueIndex('delivery_attempts_number_uq').on(t.deliveryId, t.attemptNumber),
    index('delivery_attempts_endpoint_time_idx').on(t.endpointId, t.startedAt),
  ],
);

export const quarantinedMessages = pgTable(
  'quarantined_messages',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    topic: text('topic').notNull(),
    partition: integer('partition').notNull(),
    offset: text('offset').notNull(),
    key: bytea('key'),
    raw: bytea('raw'),
    reason: text('reason').notNull(),
    /** O21: the schema path and message of a catalog refusal (data.object.amount must be integer). */
    detail: text('detail'),
    quarantinedAt: timestamp('quarantined_at', { withTimezone: true }).notNull().defaultNow(),
  },
  // A redelivered bad message is quarantined once.
  (t) => [uniqueIndex('quarantined_messages_position_uq').on(t.topic, t.partition, t.offset)],
);
