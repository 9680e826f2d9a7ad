// M1, M4: the transactional outbox (events written in the same transaction as the fact they announce, published
// to Kafka by the relay, src/outbox/relay.ts) and the feed of endpoint status changes an operator reads.
import { sql } from 'drizzle-orm';
import { bigserial, boolean, index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { webhookEndpoints } from './outbound.js';

export const outboxEvents = pgTable(
  'outbox_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** The evt_… id of the envelope, fixed when the row is written: a re-publish carries the same id (O3 dedupes it). */
    eventPublicId: text('event_public_id').notNull().unique(),
    type: text('type').notNull(),
    /** null for ledger events: the relay maps the provider to its merchant account (profile inbound.providers.*.merchant_account). */
    merchantAccount: text('merchant_account'),
    provider: text('provider'),
    livemode: boolean('livemode'),
    /** The envelope's data.object. */
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    /** Set only after Kafka acknowledged the envelope. */
    publishedAt: timestamp('published_at', { withTimezone: true }),
    /** R18: the writer's W3C traceparent (the ledger posting's span); the relay's Kafka message continues it. */
    traceparent: text('traceparent'),
  },
  (t) => [
    index('outbox_events_unpublished_idx')
      .on(t.id)
      .where(sql`published_at is null`),
  ],
);

export const endpointStatusChanges = pgTable(
  'endpoint_status_changes',
  {
    id: text('id').primaryKey(), // esc_…
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id),
    merchantAccount: text('merchant_account').notNull(),
    fromStatus: text('from_status').notNull(),
    toStatus: text('to_status').notNull(),
    reason: text('reason'),
    /** 'system' (O13 auto-disable) or 'operator:<key name>'. */
    actor: text('actor').notNull(),
    /** The endpoint.disabled / endpoint.enabled event that announced it (M4). */
    eventPublicId: text('event_public_id').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('endpoint_status_changes_endpoint_idx').on(t.endpointId, t.id)],
);
