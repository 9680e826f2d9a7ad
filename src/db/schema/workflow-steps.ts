// R13: the step journal. A local activity runs inside the workflow task that reaches it, so its result is in
// Temporal's history only once that task completes; a task lost with its worker is run again and its local
// activities with it. Each result a step answered is kept here under the key the workflow determines (workflow id,
// run id, the local activity's sequence number), so the re-run answers from the first durable answer instead of
// asking a provider or the ledger again (src/activities/step-journal.ts).
import { jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

export const workflowStepResults = pgTable(
  'workflow_step_results',
  {
    workflowId: text('workflow_id').notNull(),
    runId: text('run_id').notNull(),
    /** The local activity's id: its sequence number in the run, the same on every attempt of the workflow task. */
    step: text('step').notNull(),
    activity: text('activity').notNull(),
    /** 'result' or 'failure' (a final failure the workflow acted on). */
    outcome: text('outcome').notNull(),
    value: jsonb('value'),
    recordedAt: timestamp('recorded_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.workflowId, t.runId, t.step] })],
);
