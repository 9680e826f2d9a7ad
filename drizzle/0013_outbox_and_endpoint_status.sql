-- M1: the transactional outbox. A row is written in the transaction of the fact it announces (a ledger posting,
-- an endpoint status change); the relay publishes it to Kafka and sets published_at only after the broker's ack.
CREATE TABLE "outbox_events" (
  "id" bigserial PRIMARY KEY NOT NULL,
  "event_public_id" text NOT NULL,
  "type" text NOT NULL,
  "merchant_account" text,
  "provider" text,
  "livemode" boolean,
  "data" jsonb NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "published_at" timestamp with time zone,
  CONSTRAINT "outbox_events_event_public_id_unique" UNIQUE("event_public_id"),
  CONSTRAINT "outbox_events_account_ck" CHECK ("merchant_account" is not null or "provider" is not null)
);
--> statement-breakpoint
CREATE INDEX "outbox_events_unpublished_idx" ON "outbox_events" USING btree ("id") WHERE published_at is null;
--> statement-breakpoint
-- M4: every endpoint status change (O13 auto-disable, an operator's disable or enable), append-only.
CREATE TABLE "endpoint_status_changes" (
  "id" text PRIMARY KEY NOT NULL,
  "endpoint_id" text NOT NULL REFERENCES "webhook_endpoints"("id"),
  "merchant_account" text NOT NULL,
  "from_status" text NOT NULL,
  "to_status" text NOT NULL,
  "reason" text,
  "actor" text NOT NULL,
  "event_public_id" text NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "endpoint_status_changes_endpoint_idx" ON "endpoint_status_changes" USING btree ("endpoint_id","id");
