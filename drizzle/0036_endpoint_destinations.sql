-- M11: an endpoint's destination type (http, today's; rabbitmq; kafka), its non-secret settings and its encrypted
-- credentials (AES-256-GCM like endpoint secrets, bound to the endpoint, naming the master key). Additive: every
-- existing endpoint stays http.
ALTER TABLE "webhook_endpoints" ADD COLUMN IF NOT EXISTS "destination_type" text NOT NULL DEFAULT 'http';
ALTER TABLE "webhook_endpoints" ADD COLUMN IF NOT EXISTS "destination_config" jsonb;
ALTER TABLE "webhook_endpoints" ADD COLUMN IF NOT EXISTS "destination_credentials" bytea;
ALTER TABLE "webhook_endpoints" ADD COLUMN IF NOT EXISTS "destination_credentials_key_id" text;
DO $$ BEGIN
  ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_destination_type_check"
    CHECK ("destination_type" IN ('http', 'rabbitmq', 'kafka'));
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;
