// The smoke slice's table: a row written by a workflow's activity, proving Kafka → Temporal → PostgreSQL works.
import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

export const smokeRuns = pgTable('smoke_runs', {
  id: text('id').primaryKey(),
  note: text('note').notNull(),
  workflowId: text('workflow_id').notNull(),
  writtenAt: timestamp('written_at', { withTimezone: true }).notNull().defaultNow(),
});
