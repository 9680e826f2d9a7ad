-- O18: what the merchant asked for with Retry-After (429, 503) is kept on the attempt; a 429 lowers the endpoint's
-- send rate (M5) to backoff_rate_per_second until backoff_until. Nullable columns: no table rewrite.
ALTER TABLE "delivery_attempts" ADD COLUMN "retry_after_ms" integer;
--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "backoff_rate_per_second" integer;
--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "backoff_until" timestamp with time zone;
