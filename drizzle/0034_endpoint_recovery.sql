-- P12: when an endpoint answered 2xx again after an outage; its send rate ramps up from then (src/outbound/recovery.ts).
ALTER TABLE "webhook_endpoints" ADD COLUMN IF NOT EXISTS "recovering_since" timestamptz;
