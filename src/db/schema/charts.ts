// C12: the history the console's backlog and review-queue charts draw: one sample a minute of the open queues
// (counts and the oldest item's age in seconds), written by the API process and kept 8 days (migration 0028).
import { integer, pgTable, timestamp } from 'drizzle-orm/pg-core';

export const backlogSamples = pgTable('backlog_samples', {
  minute: timestamp('minute', { withTimezone: true }).primaryKey(),
  outboundPending: integer('outbound_pending').notNull(),
  outboundPendingOldestS: integer('outbound_pending_oldest_s').notNull(),
  outboundRetrying: integer('outbound_retrying').notNull(),
  outboundRetryingOldestS: integer('outbound_retrying_oldest_s').notNull(),
  manualReview: integer('manual_review').notNull(),
  manualReviewOldestS: integer('manual_review_oldest_s').notNull(),
  inboundUnstarted: integer('inbound_unstarted').notNull(),
  inboundUnstartedOldestS: integer('inbound_unstarted_oldest_s').notNull(),
});
