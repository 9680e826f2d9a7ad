-- R13: the step journal (src/db/schema/workflow-steps.ts): the first durable answer of each local activity of a
-- workflow run, keyed by workflow id, run id and the step's sequence number, so a workflow task that is run again
-- after its worker was lost answers every step as the first attempt did. Rows older than a week are pruned by the
-- worker (a lost workflow task is retried within minutes).
CREATE TABLE "workflow_step_results" (
	"workflow_id" text NOT NULL,
	"run_id" text NOT NULL,
	"step" text NOT NULL,
	"activity" text NOT NULL,
	"outcome" text NOT NULL,
	"value" jsonb,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "workflow_step_results_pk" PRIMARY KEY("workflow_id","run_id","step"),
	CONSTRAINT "workflow_step_results_outcome" CHECK ("outcome" IN ('result', 'failure'))
);
--> statement-breakpoint
CREATE INDEX "workflow_step_results_recorded_idx" ON "workflow_step_results" USING btree ("recorded_at");
