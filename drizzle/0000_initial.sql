CREATE TYPE "public"."delivery_status" AS ENUM('PENDING', 'RETRYING', 'DELIVERED', 'FAILED');--> statement-breakpoint
CREATE TYPE "public"."endpoint_status" AS ENUM('enabled', 'disabled');--> statement-breakpoint
CREATE TABLE "deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"event_public_id" text NOT NULL,
	"endpoint_id" text NOT NULL,
	"merchant_account" text NOT NULL,
	"status" "delivery_status" DEFAULT 'PENDING' NOT NULL,
	"attempt_count" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone,
	"delivered_at" timestamp with time zone,
	"failed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "delivery_attempts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"delivery_id" text NOT NULL,
	"attempt_number" integer NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"response_status" integer,
	"latency_ms" integer NOT NULL,
	"succeeded" boolean NOT NULL,
	"error_kind" text,
	"error_message" text,
	"response_excerpt" text
);
--> statement-breakpoint
CREATE TABLE "endpoint_secrets" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"endpoint_id" text NOT NULL,
	"ciphertext" "bytea" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "events" (
	"event_public_id" text PRIMARY KEY NOT NULL,
	"merchant_account" text NOT NULL,
	"type" text NOT NULL,
	"livemode" boolean NOT NULL,
	"created_unix" bigint NOT NULL,
	"body" "bytea" NOT NULL,
	"source_topic" text,
	"source_partition" integer,
	"source_offset" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "quarantined_messages" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"topic" text NOT NULL,
	"partition" integer NOT NULL,
	"offset" text NOT NULL,
	"key" "bytea",
	"raw" "bytea",
	"reason" text NOT NULL,
	"quarantined_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_endpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"merchant_account" text NOT NULL,
	"url" text NOT NULL,
	"description" text,
	"event_types" text[] NOT NULL,
	"livemode" boolean NOT NULL,
	"status" "endpoint_status" DEFAULT 'enabled' NOT NULL,
	"disabled_reason" text,
	"disabled_at" timestamp with time zone,
	"failing_since" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"transaction_id" text NOT NULL,
	"account" text NOT NULL,
	"amount_minor" bigint NOT NULL,
	"currency" text NOT NULL,
	CONSTRAINT "ledger_entries_nonzero_ck" CHECK ("ledger_entries"."amount_minor" <> 0)
);
--> statement-breakpoint
CREATE TABLE "ledger_transactions" (
	"id" text PRIMARY KEY NOT NULL,
	"idempotency_key" text NOT NULL,
	"content_hash" text NOT NULL,
	"kind" text NOT NULL,
	"payment_reference" text NOT NULL,
	"effective_at" timestamp with time zone NOT NULL,
	"description" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"posted_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "operator_resolutions" (
	"id" text PRIMARY KEY NOT NULL,
	"reconciliation_id" text NOT NULL,
	"decision" text NOT NULL,
	"operator" text NOT NULL,
	"reason" text NOT NULL,
	"previous_state" text NOT NULL,
	"amount_minor" bigint NOT NULL,
	"currency" text NOT NULL,
	"provider_amount_minor" bigint,
	"ledger_transaction_id" text,
	"resolved_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "operator_resolutions_decision_ck" CHECK ("operator_resolutions"."decision" in ('applied', 'rejected'))
);
--> statement-breakpoint
CREATE TABLE "provider_event_registry" (
	"provider" text NOT NULL,
	"provider_event_id" text NOT NULL,
	"registered_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "provider_event_registry_provider_provider_event_id_pk" PRIMARY KEY("provider","provider_event_id")
);
--> statement-breakpoint
CREATE TABLE "reconciliation_transitions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"reconciliation_id" text NOT NULL,
	"from_state" text NOT NULL,
	"to_state" text NOT NULL,
	"actor" text NOT NULL,
	"reason" text,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "reconciliations" (
	"id" text PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"provider_event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"payment_reference" text NOT NULL,
	"amount_minor" bigint NOT NULL,
	"currency" text NOT NULL,
	"effective_at" timestamp with time zone NOT NULL,
	"state" text NOT NULL,
	"reason" text,
	"provider_amount_minor" bigint,
	"provider_currency" text,
	"ledger_transaction_id" text,
	"acknowledged_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_receipts" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"provider" text NOT NULL,
	"provider_event_id" text NOT NULL,
	"raw_body" "bytea" NOT NULL,
	"headers" jsonb NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	"workflow_started_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "smoke_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"note" text NOT NULL,
	"workflow_id" text NOT NULL,
	"written_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_event_public_id_events_event_public_id_fk" FOREIGN KEY ("event_public_id") REFERENCES "public"."events"("event_public_id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "delivery_attempts" ADD CONSTRAINT "delivery_attempts_delivery_id_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."deliveries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "endpoint_secrets" ADD CONSTRAINT "endpoint_secrets_endpoint_id_webhook_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."webhook_endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_transaction_id_ledger_transactions_id_fk" FOREIGN KEY ("transaction_id") REFERENCES "public"."ledger_transactions"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "operator_resolutions" ADD CONSTRAINT "operator_resolutions_reconciliation_id_reconciliations_id_fk" FOREIGN KEY ("reconciliation_id") REFERENCES "public"."reconciliations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reconciliation_transitions" ADD CONSTRAINT "reconciliation_transitions_reconciliation_id_reconciliations_id_fk" FOREIGN KEY ("reconciliation_id") REFERENCES "public"."reconciliations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "deliveries_event_endpoint_uq" ON "deliveries" USING btree ("event_public_id","endpoint_id");--> statement-breakpoint
CREATE INDEX "deliveries_status_idx" ON "deliveries" USING btree ("status","id");--> statement-breakpoint
CREATE INDEX "deliveries_endpoint_idx" ON "deliveries" USING btree ("endpoint_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "delivery_attempts_number_uq" ON "delivery_attempts" USING btree ("delivery_id","attempt_number");--> statement-breakpoint
CREATE INDEX "endpoint_secrets_endpoint_idx" ON "endpoint_secrets" USING btree ("endpoint_id","created_at");--> statement-breakpoint
CREATE INDEX "events_merchant_idx" ON "events" USING btree ("merchant_account","received_at");--> statement-breakpoint
CREATE UNIQUE INDEX "quarantined_messages_position_uq" ON "quarantined_messages" USING btree ("topic","partition","offset");--> statement-breakpoint
CREATE INDEX "webhook_endpoints_merchant_idx" ON "webhook_endpoints" USING btree ("merchant_account","livemode");--> statement-breakpoint
CREATE INDEX "ledger_entries_account_idx" ON "ledger_entries" USING btree ("account","currency");--> statement-breakpoint
CREATE INDEX "ledger_entries_transaction_idx" ON "ledger_entries" USING btree ("transaction_id");--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_transactions_idempotency_uq" ON "ledger_transactions" USING btree ("idempotency_key");--> statement-breakpoint
CREATE INDEX "ledger_transactions_payment_idx" ON "ledger_transactions" USING btree ("payment_reference","effective_at");--> statement-breakpoint
CREATE UNIQUE INDEX "operator_resolutions_once_uq" ON "operator_resolutions" USING btree ("reconciliation_id");--> statement-breakpoint
CREATE UNIQUE INDEX "reconciliation_transitions_uq" ON "reconciliation_transitions" USING btree ("reconciliation_id","from_state","to_state");--> statement-breakpoint
CREATE UNIQUE INDEX "reconciliations_event_uq" ON "reconciliations" USING btree ("provider","provider_event_id");--> statement-breakpoint
CREATE INDEX "reconciliations_state_idx" ON "reconciliations" USING btree ("state","id");--> statement-breakpoint
CREATE INDEX "reconciliations_payment_idx" ON "reconciliations" USING btree ("payment_reference");--> statement-breakpoint
CREATE UNIQUE INDEX "webhook_receipts_event_uq" ON "webhook_receipts" USING btree ("provider","provider_event_id");--> statement-breakpoint
CREATE INDEX "webhook_receipts_unstarted_idx" ON "webhook_receipts" USING btree ("received_at") WHERE workflow_started_at IS NULL;