-- P1: in batched delivery mode the dispatcher owns a delivery from fan-out until it is DELIVERED or has a workflow;
-- handoff_since marks that window, and the dispatcher's sweep starts a workflow for any row left in it (kill -9).
ALTER TABLE "deliveries" ADD COLUMN "handoff_since" timestamp with time zone;
--> statement-breakpoint
CREATE INDEX "deliveries_handoff_idx" ON "deliveries" ("handoff_since") WHERE "handoff_since" IS NOT NULL;
