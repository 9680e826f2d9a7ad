-- O19: an event's body (and its attempts' response excerpts) can be removed, by the retention sweep after the
-- profile's retention or by an admin's expunge; the row, its ids, type, times and deliveries stay. The partial index
-- is what the sweep walks: bodies still present, oldest first.
ALTER TABLE "events" ALTER COLUMN "body" DROP NOT NULL;
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "expunged_at" timestamp with time zone;
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "expunge_reason" text;
--> statement-breakpoint
CREATE INDEX "events_retention_idx" ON "events" USING btree ("received_at") WHERE "expunged_at" IS NULL;
