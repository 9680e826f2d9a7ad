-- M2: an endpoint's unbroken run of failed attempts; at outbound.lanes.slow_after_failures its attempts go to the slow lane.
ALTER TABLE "webhook_endpoints" ADD COLUMN "consecutive_failures" integer DEFAULT 0 NOT NULL;
--> statement-breakpoint
-- M3: opt-in ordering; the default keeps every existing endpoint unordered.
ALTER TABLE "webhook_endpoints" ADD COLUMN "ordering" text DEFAULT 'none' NOT NULL;
--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_ordering_ck" CHECK ("ordering" in ('none', 'per_endpoint'));
--> statement-breakpoint
-- M3: the last sequence number handed to a delivery of this endpoint (fan-out, under the endpoint's row lock).
ALTER TABLE "webhook_endpoints" ADD COLUMN "order_sequence" bigint DEFAULT 0 NOT NULL;
--> statement-breakpoint
-- M5: null = no throttle; otherwise at most this many POSTs per second.
ALTER TABLE "webhook_endpoints" ADD COLUMN "rate_limit_per_second" integer;
--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_rate_limit_ck" CHECK ("rate_limit_per_second" is null or "rate_limit_per_second" between 1 and 10000);
--> statement-breakpoint
-- M5: the next free send slot of a throttled endpoint.
ALTER TABLE "webhook_endpoints" ADD COLUMN "throttle_next_at" timestamp with time zone;
--> statement-breakpoint
-- M5: when the last POST to a throttled endpoint was allowed to go (the send-time spacing).
ALTER TABLE "webhook_endpoints" ADD COLUMN "throttle_sent_at" timestamp with time zone;
--> statement-breakpoint
-- M3: the delivery's place in its ordered endpoint's sequence (null when the endpoint was not ordered at fan-out).
ALTER TABLE "deliveries" ADD COLUMN "sequence" bigint;
--> statement-breakpoint
-- M3: an operator let the next delivery go ahead without waiting for this one.
ALTER TABLE "deliveries" ADD COLUMN "order_skipped_at" timestamp with time zone;
--> statement-breakpoint
CREATE INDEX "deliveries_endpoint_sequence_idx" ON "deliveries" USING btree ("endpoint_id","sequence") WHERE "sequence" is not null;
