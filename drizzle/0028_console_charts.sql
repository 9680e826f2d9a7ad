-- C12, C13 (issue 20): what the console's and portal's charts read, index-backed. An attempt carries its endpoint
-- (filled from its delivery by a trigger, so no writer changes), indexed by (endpoint, time) with the columns the
-- charts aggregate, so a chart reads one endpoint's range and nothing else. One backlog sample per minute
-- (written by the API process, kept 8 days) is the history the backlog and review-queue charts draw.
ALTER TABLE "delivery_attempts" ADD COLUMN "endpoint_id" text;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION public.apipay_attempt_endpoint() RETURNS trigger LANGUAGE plpgsql
  SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
  IF NEW.endpoint_id IS NULL THEN
    SELECT d.endpoint_id INTO NEW.endpoint_id FROM public.deliveries d WHERE d.id = NEW.delivery_id;
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER "delivery_attempts_endpoint" BEFORE INSERT ON "delivery_attempts"
  FOR EACH ROW EXECUTE FUNCTION public.apipay_attempt_endpoint();
--> statement-breakpoint
UPDATE "delivery_attempts" a SET "endpoint_id" = d."endpoint_id" FROM "deliveries" d WHERE d."id" = a."delivery_id" AND a."endpoint_id" IS NULL;
--> statement-breakpoint
CREATE INDEX "delivery_attempts_endpoint_time_idx" ON "delivery_attempts" USING btree ("endpoint_id", "started_at")
  INCLUDE ("succeeded", "response_status", "error_kind", "latency_ms");
--> statement-breakpoint
CREATE INDEX "deliveries_open_merchant_idx" ON "deliveries" USING btree ("merchant_account", "next_attempt_at")
  WHERE "status" IN ('PENDING', 'RETRYING');
--> statement-breakpoint
CREATE INDEX "ledger_transactions_posted_idx" ON "ledger_transactions" USING btree ("posted_at");
--> statement-breakpoint
CREATE INDEX "reconciliations_acknowledged_idx" ON "reconciliations" USING btree ("acknowledged_at");
--> statement-breakpoint
CREATE TABLE "backlog_samples" (
  "minute" timestamp with time zone PRIMARY KEY NOT NULL,
  "outbound_pending" integer NOT NULL,
  "outbound_pending_oldest_s" integer NOT NULL,
  "outbound_retrying" integer NOT NULL,
  "outbound_retrying_oldest_s" integer NOT NULL,
  "manual_review" integer NOT NULL,
  "manual_review_oldest_s" integer NOT NULL,
  "inbound_unstarted" integer NOT NULL,
  "inbound_unstarted_oldest_s" integer NOT NULL
);
