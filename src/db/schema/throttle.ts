// A23: the shared token buckets of the failure throttles (failed credentials per address and key id, failed
// signatures per address), one row per (scope, key); written only by src/access/failure-buckets.ts. UNLOGGED (migration
// 0030, which drizzle's schema cannot say): a crash or failover empties it, giving every client a full budget again.
import { boolean, doublePrecision, index, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

export const authFailureBuckets = pgTable(
  'auth_failure_buckets',
  {
    scope: text('scope').notNull(),
    key: text('key').notNull(),
    tokens: doublePrecision('tokens').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull(),
    /** When the bucket is full again: past it the row means nothing and may be deleted. */
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    /** Whether the last take found no token (RETURNING sees only the new row, so the answer is kept with it). */
    lastRefused: boolean('last_refused').notNull(),
  },
  (t) => [
    primaryKey({ name: 'auth_failure_buckets_pk', columns: [t.scope, t.key] }),
    index('auth_failure_buckets_expires_idx').on(t.expiresAt),
  ],
);
