-- L1: the provider object an event is about; L5: posted and reported state of a discrepancy after settlement.
ALTER TABLE "reconciliations" ADD COLUMN "provider_object_id" text;--> statement-breakpoint
ALTER TABLE "reconciliations" ADD COLUMN "discrepancy" jsonb;
